import { Command, InvalidArgumentError } from 'commander'
import type { Config } from '../../config.js'
import { historyCommand } from '../history/commands.js'
import { number, port } from '../parse.js'

// The operator commands as commander commands: their help, usage errors and exit codes are the client
// commands' (program.ts). This file loads only commander; each action loads the server's modules.

const ENVIRONMENT = `
Configured by the environment (README, "Configuration"): PORT, HOST, DATA_DIR or DATABASE_URL,
REDIS_URL, UPSTREAM_URL, MASTER_KEY, LOG_LEVEL …`

/** serve, worker, migrate, keys, users, tokens, backup, restore, replay-exchange, history. */
export function operatorCommands(): Command[] {
  const serve = new Command('serve')
    .description('the HTTP API, its backtest workers and live runs (what npm start runs)')
    .option('--port <port>', 'listen here instead of PORT (default 8080; 0: any free port)', port)
    .addHelpText('after', ENVIRONMENT)
    .action(async (options: { port?: number }) => {
      const { runServe } = await runner()
      return runServe({ ...(await config()), ...(options.port === undefined ? {} : { port: options.port }) })
    })

  const worker = new Command('worker')
    .description('backtest workers without HTTP (needs DATABASE_URL)')
    .addHelpText('after', ENVIRONMENT)
    .action(async () => (await runner()).runWorker(await config()))

  const migrate = new Command('migrate')
    .description('apply database migrations and exit; prints the applied ones as JSON')
    .addHelpText('after', ENVIRONMENT)
    .action(async () => (await runner()).runMigrate(await config()))

  const keys = new Command('keys').description('API keys (run where the database is: in a running server, else on DATA_DIR or DATABASE_URL)')
  keys
    .command('create')
    .description('create the user if needed and an API key; prints JSON with the secret (shown once)')
    .requiredOption('--email <email>', "the user's email")
    .requiredOption('--scopes <list>', 'comma-separated, e.g. market:read,backtests:read,backtests:write')
    .option('--plan <plan>', 'also set the plan: free, standard or pro')
    .option('--until <date>', 'the plan ends after this UTC day (2026-12-31) or at this time (ISO 8601)')
    .action(async (options: { email: string; scopes: string; plan?: string; until?: string }) => (await runner()).runKeysCreate(await config(), options))

  const users = new Command('users').description("users' plans and dry-run wallets")
  users
    .command('set-plan')
    .description("set a user's plan (creating the user if needed); prints JSON")
    .requiredOption('--email <email>', "the user's email")
    .requiredOption('--plan <plan>', 'free, standard or pro')
    .option('--until <date>', 'the plan ends after this UTC day (2026-12-31) or at this time (ISO 8601)')
    .action(async (options: { email: string; plan: string; until?: string }) => (await runner()).runUsersSetPlan(await config(), options))
  users
    .command('set-paper-balance')
    .description("set a user's dry-run wallet in USDT (creating the user if needed); prints JSON")
    .requiredOption('--email <email>', "the user's email")
    .requiredOption('--amount <decimal>', 'USDT, e.g. 25000')
    .action(async (options: { email: string; amount: string }) => (await runner()).runUsersSetPaperBalance(await config(), options))

  const tokens = new Command('tokens').description('app tokens (Bearer) without an identity provider')
  tokens
    .command('issue')
    .description('an app token for the user, created if needed; prints JSON')
    .requiredOption('--email <email>', "the user's email")
    .action(async (options: { email: string }) => (await runner()).runTokensIssue(await config(), options))

  const backup = new Command('backup')
    .description('copy the embedded database (DATA_DIR) into FILE, through the running server if one holds it; progress on stderr')
    .argument('<file>', 'a new file to write (never overwritten)')
    .option('--json', 'print the result as one line of JSON')
    .addHelpText('after', `\nOn PostgreSQL (DATABASE_URL) use pg_dump: docs/operating.md, "Backups and restore".${ENVIRONMENT}`)
    .action(async (file: string, options: { json?: boolean }) => (await runner()).runBackup(await config(), file, options))

  const restore = new Command('restore')
    .description('unpack a backup into an empty DATA_DIR (refused into a non-empty one); progress on stderr')
    .argument('<file>', 'a file written by perpetua backup')
    .option('--json', 'print the result as one line of JSON')
    .addHelpText('after', `\nThe secrets in it need the master key it was taken with: MASTER_KEY, or the old DATA_DIR's master.key copied in first.${ENVIRONMENT}`)
    .action(async (file: string, options: { json?: boolean }) => (await runner()).runRestore(await config(), file, options))

  const replay = new Command('replay-exchange')
    .description('the recorded-data Binance look-alike alone; prints its URLs as JSON')
    .option('--port <port>', 'listen here (default 0: any free port)', port, 0)
    .option('--host <host>', 'listen on this address (default 127.0.0.1)')
    .option('--data <dir>', 'recorded data (default REPLAY_DATA_DIR, else the built-in data/)')
    .option('--speed <factor>', 'replay speed, > 0 (1: real time)', positive)
    .option('--start <iso>', 'replay from this time (ISO 8601)', isoTime)
    .option('--account <KEY:SECRET[:BALANCE]>', 'a trading account (repeatable)', (value: string, previous: string[] = []) => [...previous, value])
    .option('--state <file>', 'keep accounts, orders and positions in this file across restarts')
    .action(async (options: import('./run.js').ReplayExchangeOptions) => (await runner()).runReplayExchange(options))

  return [serve, worker, migrate, keys, users, tokens, backup, restore, replay, historyCommand()]
}

/** The names cli.ts routes to these commands. */
export const OPERATOR_COMMANDS = new Set(['serve', 'worker', 'migrate', 'keys', 'users', 'tokens', 'backup', 'restore', 'replay-exchange', 'history'])

function runner(): Promise<typeof import('./run.js')> {
  return import('./run.js')
}

async function config(): Promise<Config> {
  const { loadConfig } = await import('../../config.js')
  return loadConfig()
}

function positive(value: string): number {
  const parsed = number(value)
  if (!(parsed > 0)) throw new InvalidArgumentError('must be above 0.')
  return parsed
}

function isoTime(value: string): number {
  const parsed = Date.parse(value)
  if (Number.isNaN(parsed)) throw new InvalidArgumentError('not an ISO 8601 time.')
  return parsed
}
