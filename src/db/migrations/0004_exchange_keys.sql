-- API key rotation, and the exchange (Binance) keys users register for their own accounts.

-- Set when the secret was last replaced; null for a key never rotated.
ALTER TABLE api_keys ADD COLUMN last_rotated_at timestamptz;

-- Both the exchange API key and its secret are sealed (AES-256-GCM under MASTER_KEY): the secret
-- must be recoverable to sign requests to the exchange, and the API key names the user's exchange
-- account. The listing shows only `api_key_masked`; `api_key_sha256` finds a duplicate registration
-- without opening every sealed key.
CREATE TABLE exchange_keys (
  id                   text PRIMARY KEY,
  user_id              integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  label                text,
  api_key_enc          text NOT NULL,
  api_key_masked       text NOT NULL,
  api_key_sha256       text NOT NULL,
  api_secret_enc       text NOT NULL,
  verification_status  text NOT NULL CHECK (verification_status IN ('pending', 'verified', 'failed')),
  -- The exchange's error for a failed (or inconclusive) check: Binance's numeric code and message.
  verification_code    integer,
  verification_message text,
  last_verified        timestamptz,
  created_at           timestamptz NOT NULL,
  UNIQUE (user_id, api_key_sha256)
);
CREATE INDEX exchange_keys_user_created_idx ON exchange_keys (user_id, created_at DESC, id DESC);
