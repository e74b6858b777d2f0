-- Webhook subscriptions, one delivery per event and webhook, and the log of every attempt.

CREATE TABLE webhooks (
  id                    text PRIMARY KEY,
  user_id               integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  url                   text NOT NULL,
  events                text[] NOT NULL,
  description           text,
  status                text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'broken')),
  balance_low_threshold numeric CHECK (balance_low_threshold > 0),
  -- AES-256-GCM under MASTER_KEY (SecretBox): deliveries need the secret itself to sign.
  secret_enc            text NOT NULL,
  consecutive_failures  integer NOT NULL DEFAULT 0,
  last_delivery_at      timestamptz,
  last_success_at       timestamptz,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL,
  CONSTRAINT webhooks_user_url_key UNIQUE (user_id, url)
);
-- Keyset pagination, newest first within one user; fan-out reads a user's webhooks.
CREATE INDEX webhooks_user_created_idx ON webhooks (user_id, created_at DESC, id DESC);

-- One row per (event, webhook). `state` pending covers waiting for the first attempt, waiting for a
-- retry, and held while the webhook is paused or broken. `lease` names the queue job (or test request)
-- that currently owns the row; `next_attempt_at` is then the lease's expiry, after which the sweep
-- hands the row to a new job (a worker that died loses nothing).
CREATE TABLE deliveries (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  webhook_id      text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id        text NOT NULL,
  event_type      text NOT NULL,
  -- The body of a test delivery. Deliveries of outbox events leave it null and build it from the
  -- event row at each attempt, the same bytes every time (retries carry the same id and body).
  body            text,
  state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease           text,
  last_status     integer,
  last_error      text,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  CONSTRAINT deliveries_webhook_event_key UNIQUE (webhook_id, event_id)
);
-- The sweep reads only pending rows that are due. Retention walks the primary key (ids grow with
-- time) instead of another index: every index is written on each delivery's two row versions.
CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at, id) WHERE state = 'pending';

-- No foreign key to deliveries (its index would be one more write per attempt): attempts go with
-- their webhook, and retention removes old ones by id order.
CREATE TABLE delivery_attempts (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id      bigint NOT NULL,
  webhook_id       text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id         text NOT NULL,
  event_type       text NOT NULL,
  attempt          integer NOT NULL,
  attempted_at     timestamptz NOT NULL,
  delivered        boolean NOT NULL,
  response_status  integer,
  response_time_ms integer,
  error            text
);
CREATE INDEX delivery_attempts_webhook_idx ON delivery_attempts (webhook_id, attempted_at DESC, id DESC);

-- Outbox events not yet turned into deliveries. Events written before webhooks existed had no one to go to.
-- `seq` is the order events were written in: created_at ties within a millisecond, and ids are random.
ALTER TABLE events ADD COLUMN fanned_out_at timestamptz;
ALTER TABLE events ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
UPDATE events SET fanned_out_at = created_at;
CREATE INDEX events_unfanned_idx ON events (seq) WHERE fanned_out_at IS NULL;

-- Announces committed events to the dispatchers: NOTIFY is delivered only when the writing
-- transaction commits. In a trigger rather than a second statement of recordEvent because, on the
-- embedded database, a round trip costs more than the insert (measured: 307 µs an insert, 550 µs
-- with the notify as a CTE of the same statement).
CREATE FUNCTION perpetua_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('perpetua_outbox', '');
  RETURN NULL;
END
$$;
CREATE TRIGGER events_notify_outbox AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION perpetua_outbox_notify();
