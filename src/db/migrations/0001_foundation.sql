-- Users, API keys, strategy records, and the shared counters that replace in-process state
-- when several nodes share one PostgreSQL server.

CREATE TABLE users (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email           text NOT NULL UNIQUE,
  name            text NOT NULL DEFAULT '',
  idpa_id         text UNIQUE,
  idpb_id         text UNIQUE,
  plan            text NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'standard', 'pro')),
  plan_expires_at timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- The secret must be recoverable to verify HMAC signatures, so it is encrypted (AES-256-GCM under
-- MASTER_KEY), never stored in plain text.
CREATE TABLE api_keys (
  id          text PRIMARY KEY,
  user_id     integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name        text NOT NULL DEFAULT '',
  scopes      text[] NOT NULL,
  secret_enc  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);
CREATE INDEX api_keys_user_idx ON api_keys (user_id);

-- The public, unauthenticated strategy metadata CRUD. Timestamps are UTC without zone, as served.
CREATE TABLE public_strategies (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name            text NOT NULL UNIQUE,
  author          text,
  description     text,
  entry_condition text,
  exit_condition  text,
  bot_name        text,
  created_at      timestamp NOT NULL,
  updated_at      timestamp NOT NULL
);

CREATE TABLE strategies (
  id                  text PRIMARY KEY,
  user_id             integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name                text NOT NULL,
  template_id         text NOT NULL,
  params              jsonb NOT NULL,
  symbols             text[] NOT NULL,
  timeframe           text NOT NULL,
  capital             numeric NOT NULL CHECK (capital > 0),
  leverage            integer NOT NULL CHECK (leverage BETWEEN 1 AND 20),
  status              text NOT NULL DEFAULT 'draft'
                        CHECK (status IN ('draft', 'deployed', 'paused', 'stopped', 'error')),
  deployed_at         timestamptz,
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL,
  deleted_at          timestamptz,
  stat_open_positions integer NOT NULL DEFAULT 0,
  stat_total_pnl      numeric NOT NULL DEFAULT 0,
  stat_total_trades   integer NOT NULL DEFAULT 0,
  stat_winning_trades integer NOT NULL DEFAULT 0
);
-- Keyset pagination: newest first within one user.
CREATE INDEX strategies_user_created_idx ON strategies (user_id, created_at DESC, id DESC);

-- Signatures already accepted, so a replayed request is refused on every node (server mode).
CREATE UNLOGGED TABLE seen_signatures (
  signature  text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);

-- Fixed-window weight counters per key or IP (server mode without Redis).
CREATE UNLOGGED TABLE rate_windows (
  bucket     text NOT NULL,
  window_id  bigint NOT NULL,
  used       integer NOT NULL,
  PRIMARY KEY (bucket, window_id)
);
