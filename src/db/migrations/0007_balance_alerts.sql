-- account.balance_low (issue 11): per exchange account and asset, whether the available balance is
-- below the owner's threshold. The watcher fires only when it flips this to true (one statement, so
-- several processes watching at once fire once) and re-arms when the balance recovers.
CREATE TABLE balance_alerts (
  exchange_key_id text NOT NULL REFERENCES exchange_keys (id) ON DELETE CASCADE,
  asset           text NOT NULL,
  below           boolean NOT NULL,
  changed_at      timestamptz NOT NULL,
  PRIMARY KEY (exchange_key_id, asset)
);
