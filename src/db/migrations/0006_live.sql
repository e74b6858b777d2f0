-- Strategy runs (issue 11): the paper wallet, one row per deploy with its runner lease and state,
-- the order intents and fills of every run, and the closed trades.

ALTER TABLE users ADD COLUMN paper_balance numeric NOT NULL DEFAULT 10000 CHECK (paper_balance >= 0);

-- One row per deploy. A run is active while ended_at is null; at most one per strategy.
-- lease_owner/lease_expires_at: the process running it (renewed every 5 s, taken over after 15 s).
-- state: the paper ledger and the bar the runner last completed, saved after every bar that changed it,
-- so a runner resumed elsewhere continues with the same position.
CREATE TABLE strategy_runs (
  strategy_id      text NOT NULL REFERENCES strategies (id) ON DELETE CASCADE,
  run              integer NOT NULL CHECK (run >= 1),
  user_id          integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  template_id      text NOT NULL,
  params           jsonb NOT NULL,
  symbol           text NOT NULL,
  timeframe        text NOT NULL,
  capital          numeric NOT NULL CHECK (capital > 0),
  leverage         integer NOT NULL CHECK (leverage BETWEEN 1 AND 20),
  dry_run          boolean NOT NULL,
  exchange_key_id  text,
  started_at       timestamptz NOT NULL,
  ended_at         timestamptz,
  lease_owner      text,
  lease_expires_at timestamptz,
  state            jsonb,
  PRIMARY KEY (strategy_id, run)
);
CREATE UNIQUE INDEX strategy_runs_active_idx ON strategy_runs (strategy_id) WHERE ended_at IS NULL;
CREATE INDEX strategy_runs_lease_idx ON strategy_runs (lease_expires_at) WHERE ended_at IS NULL;

-- An order intent, committed before its order is sent (or, for the paper broker, filled).
-- client_order_id = pp-<strategy hex>-<run>-<intent> (DESIGN §6).
CREATE TABLE strategy_orders (
  client_order_id text PRIMARY KEY,
  strategy_id     text NOT NULL REFERENCES strategies (id) ON DELETE CASCADE,
  run             integer NOT NULL,
  intent          integer NOT NULL,
  symbol          text NOT NULL,
  -- The template's target (signed fraction of equity), or null for a reduce-only close.
  target          numeric,
  reduce_only     boolean NOT NULL,
  status          text NOT NULL CHECK (status IN ('new', 'filled', 'skipped', 'cancelled')),
  side            text CHECK (side IN ('buy', 'sell')),
  qty             numeric,
  price           numeric,
  fee             numeric,
  created_at      timestamptz NOT NULL,
  filled_at       timestamptz,
  UNIQUE (strategy_id, run, intent)
);
CREATE INDEX strategy_orders_list_idx ON strategy_orders (strategy_id, created_at DESC, client_order_id DESC);

-- Closed round trips (the engine's Trade), numbered per strategy across runs.
CREATE TABLE strategy_trades (
  strategy_id text NOT NULL REFERENCES strategies (id) ON DELETE CASCADE,
  id          integer NOT NULL,
  run         integer NOT NULL,
  symbol      text NOT NULL,
  side        text NOT NULL CHECK (side IN ('buy', 'sell')),
  entry_time  timestamptz NOT NULL,
  entry_price numeric NOT NULL,
  exit_time   timestamptz NOT NULL,
  exit_price  numeric NOT NULL,
  qty         numeric NOT NULL,
  fee         numeric NOT NULL,
  funding     numeric NOT NULL,
  pnl         numeric NOT NULL,
  exit_reason text NOT NULL,
  PRIMARY KEY (strategy_id, id)
);
