-- Issue 37, item 2: an open strategy stream closes when the API key that opened it is revoked or
-- rotated. The key trigger (0009) also announces such a change on the strategy stream channel, where
-- every node's stream feed hears it in commit order with the stream messages themselves: a message
-- committed after the revocation reaches a node's feed after it, so no socket of the key is sent it.
-- Announced whatever wrote the row (the API, a user deletion's cascade, an operator's SQL). The payload
-- names the key, the reason and, for a rotation, the new secret's version (src/live/stream/status-messages.ts, Notification).
CREATE OR REPLACE FUNCTION perpetua_api_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('perpetua_api_keys', COALESCE(OLD.id, NEW.id));
  IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND NEW.revoked_at IS NOT NULL AND OLD.revoked_at IS NULL) THEN
    PERFORM pg_notify('perpetua_strategy', json_build_object('revoked', json_build_object('key_id', OLD.id, 'reason', 'revoked'))::text);
  ELSIF TG_OP = 'UPDATE' AND NEW.secret_enc IS DISTINCT FROM OLD.secret_enc THEN
    -- With the new secret's version (src/auth/key-directory.ts keyVersion): a stream opened with it stays.
    PERFORM pg_notify('perpetua_strategy', json_build_object('revoked', json_build_object('key_id', OLD.id, 'reason', 'rotated',
      'version', encode(sha256(convert_to(NEW.secret_enc, 'UTF8')), 'base64')))::text);
  END IF;
  RETURN NULL;
END
$$;
