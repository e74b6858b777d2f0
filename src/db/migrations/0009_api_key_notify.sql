-- Every change to an API key row is announced on channel perpetua_api_keys with the key's id, at
-- commit, by a trigger: nodes that cache keys (src/auth/key-directory.ts) drop the entry whatever
-- wrote the row (the API, the CLI, a user deletion's cascade, an operator's SQL).
CREATE FUNCTION perpetua_api_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('perpetua_api_keys', COALESCE(OLD.id, NEW.id));
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION perpetua_api_key_changed();
