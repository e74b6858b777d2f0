// Kept apart from operator.ts, which loads the database modules: the entry and the client commands'
// help read these without loading them.

/** The operator commands: they run Perpetua itself or act on its database (DATA_DIR / DATABASE_URL). */
export const OPERATOR_COMMANDS = new Set(['serve', 'worker', 'migrate', 'keys', 'users', 'tokens', 'replay-exchange'])

export const OPERATOR_USAGE = `Operator commands (run Perpetua or act on its database; configured by the environment, see the README):

  serve                                   the HTTP API (what npm start runs)
  worker                                  backtest workers without HTTP (needs DATABASE_URL)
  migrate                                 apply database migrations and exit
  keys create --email E --scopes a,b [--plan P [--until DATE]]
                                          create the user if needed and an API key; prints JSON
  users set-plan --email E --plan free|standard|pro [--until DATE]
                                          set a user's plan (creating the user if needed); prints JSON
  users set-paper-balance --email E --amount A
                                          set a user's dry-run wallet in USDT (creating the user if needed); prints JSON
  tokens issue --email E                  an app token (Bearer) for the user, created if needed; prints JSON
  replay-exchange --port P [--data DIR] [--host H] [--speed S] [--start ISO] [--account KEY:SECRET[:BALANCE] ...] [--state FILE]
                                          the recorded-data Binance look-alike alone; prints its URLs as JSON`
