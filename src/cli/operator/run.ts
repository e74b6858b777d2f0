import { setTimeout as sleep } from 'node:timers/promises'
import path from 'node:path'
import { type Config, loadConfig } from '../../config.js'
import { controlSocketPath, sendControlCommand } from '../../control/control-socket.js'
import { checkOperatorArgs } from '../../control/operator-args.js'
import { inspectLock } from '../../db/data-dir-lock.js'
import { socketDirFor } from '../../db/pglite-host.js'
import { beginOpeningStorage, openStorage } from '../../storage.js'
import { UsageError } from '../cli-errors.js'
import { portTaken } from '../port-taken.js'

// Roles import their heavy modules (Fastify, pg-boss) only when they run: `keys create` starts in
// well under a second instead of ~3 s.
export async function runServe(config: Config): Promise<void> {
  // The embedded database opens in its own thread while this one loads the HTTP stack and builds the
  // app (each ~0.3–0.7 s on a warm DATA_DIR on a busy 2-core host).
  const opening = beginOpeningStorage(config, 'serve')
  opening.opened.catch(() => undefined) // awaited, and so reported, by serve()
  const [{ pino }, { serve }] = await Promise.all([import('pino'), import('../../serve.js')])
  const logger = pino({ level: config.logLevel })
  const server = await serve(config, logger, opening).catch((error: unknown) => {
    throw portTaken(error, 'serve', 'set PORT (PORT=8081 perpetua serve, or PORT=0 for any free port) or pass --port')
  })
  await untilSignal(logger, server)
}

export async function runWorker(config: Config): Promise<void> {
  const [{ pino }, { work }] = await Promise.all([import('pino'), import('../../worker.js')])
  const logger = pino({ level: config.logLevel })
  await untilSignal(logger, await work(config, logger))
}

/** Runs until SIGTERM or SIGINT, then stops the role gracefully (docs/operating.md, "Stopping, hand-over and readiness"); a second signal exits at once. */
async function untilSignal(logger: { info(obj: unknown, msg?: string): void; error(obj: unknown, msg?: string): void }, role: { stop(): Promise<void> }): Promise<void> {
  await new Promise<void>((resolve) => {
    let signals = 0
    const onSignal = (signal: NodeJS.Signals) => {
      if (++signals > 1) process.exit(130)
      logger.info({ signal }, 'shutting down: draining, handing runs and jobs to other nodes')
      void role.stop().then(resolve, (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed')
        resolve()
      })
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  })
  logger.info({}, 'stopped')
}

export async function runMigrate(config: Config): Promise<void> {
  const storage = await openStorage(config, 'migrate')
  await storage.close()
  process.stdout.write(`${JSON.stringify({ applied: storage.migrationsApplied })}\n`)
}

/** Runs in a live server when one holds the embedded DATA_DIR, else against the database directly. */
export function runKeysCreate(config: Config, values: { email: string; scopes: string; plan?: string; until?: string }): Promise<void> {
  return printWhereTheDatabaseIs(config, 'keys.create', { email: values.email, scopes: values.scopes, plan: values.plan, until: values.until })
}

/** `--until` is a date (the plan lasts through that UTC day) or an ISO 8601 time; omitted, the plan has no end. */
export function runUsersSetPlan(config: Config, values: { email: string; plan: string; until?: string }): Promise<void> {
  return printWhereTheDatabaseIs(config, 'users.set-plan', { email: values.email, plan: values.plan, until: values.until })
}

/** The dry-run wallet deploys check their capital against (402 INSUFFICIENT_FUNDS). */
export function runUsersSetPaperBalance(config: Config, values: { email: string; amount: string }): Promise<void> {
  return printWhereTheDatabaseIs(config, 'users.set-paper-balance', { email: values.email, amount: values.amount })
}

/** An app token for a user (created if needed), as the sign-in endpoints would give; prints JSON. */
export function runTokensIssue(config: Config, values: { email: string }): Promise<void> {
  return printWhereTheDatabaseIs(config, 'tokens.issue', { email: values.email })
}

/** Checks the arguments first (a usage error opens no database), runs the command, prints its JSON. */
async function printWhereTheDatabaseIs(config: Config, command: string, args: Record<string, unknown>): Promise<void> {
  try {
    checkOperatorArgs(command, args, Date.now())
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const result = await runWhereTheDatabaseIs(config, command, args)
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

/**
 * Runs an operator command where the database is: inside the server that holds an embedded DATA_DIR
 * (through its control socket), else here. A holder that does not answer yet (a server still starting,
 * a `migrate` running) is waited for, up to 30 s.
 */
async function runWhereTheDatabaseIs(
  config: Config,
  command: string,
  args: Record<string, unknown>,
  { here = () => runHere(config, command, args), ...sending }: { here?: () => Promise<unknown>; timeoutMs?: number; onProgress?: (message: string) => void } = {},
): Promise<unknown> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const lock = config.databaseUrl ? { held: false as const } : inspectLock(config.dataDir)
    if (!lock.held) return here()
    try {
      return await sendControlCommand(controlSocketPath(socketDirFor(config.dataDir)), command, args, sending)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ECONNREFUSED') throw error
      if (Date.now() > deadline) {
        throw new Error(`perpetua process ${lock.pid} holds ${config.dataDir} but does not take commands; is it still starting?`)
      }
      await sleep(200)
    }
  }
}

async function runHere(config: Config, command: string, args: Record<string, unknown>): Promise<unknown> {
  const [{ operatorCommands }, { createServices }] = await Promise.all([import('../../control/commands.js'), import('../../services.js')])
  const storage = await openStorage(config, command)
  try {
    const handler = operatorCommands(createServices(config, storage.database))[command]
    if (!handler) throw new Error(`unknown command ${command}`)
    return await handler(args)
  } finally {
    await storage.close()
  }
}

/**
 * `perpetua backup FILE`: through the server that holds the embedded DATA_DIR, else on the stopped
 * DATA_DIR directly. The server writes FILE, so the path goes to it absolute.
 */
export async function runBackup(config: Config, file: string, options: { json?: boolean }): Promise<void> {
  const args = { file: path.resolve(file) }
  try {
    checkOperatorArgs('backup.create', args, Date.now())
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  if (config.databaseUrl) throw new Error('DATABASE_URL is set: back up PostgreSQL with pg_dump (docs/operating.md, "Backups and restore")')
  const progress = progressOn('backup')
  const { backupStoppedDataDir } = await import('../../backup/create-backup.js')
  const result = (await runWhereTheDatabaseIs(config, 'backup.create', args, {
    here: () => backupStoppedDataDir(config, args.file, progress),
    timeoutMs: 10 * 60_000,
    onProgress: progress,
  })) as import('../../backup/create-backup.js').BackupResult
  const { manifest } = result
  process.stdout.write(
    options.json ? `${JSON.stringify(result)}\n` : `backup ${result.file}: schema ${manifest.schema_version ?? 'none'}, ${manifest.payload.bytes} bytes, taken ${manifest.created_at}\n`,
  )
}

/** `perpetua restore FILE` into an empty DATA_DIR. */
export async function runRestore(config: Config, file: string, options: { json?: boolean }): Promise<void> {
  const { restoreBackup } = await import('../../backup/restore-backup.js')
  const result = await restoreBackup(config, path.resolve(file), progressOn('restore'))
  const { manifest } = result
  process.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `restored ${result.file} into ${result.data_dir}: schema ${manifest.schema_version ?? 'none'}\n`)
}

function progressOn(command: string): (message: string) => void {
  return (message) => process.stderr.write(`perpetua ${command}: ${message}\n`)
}

/** The replay exchange alone; --data wins over REPLAY_DATA_DIR (config.ts reads it, like every variable). */
export interface ReplayExchangeOptions {
  port: number
  host?: string
  data?: string
  speed?: number
  /** Unix ms. */
  start?: number
  account?: string[]
  state?: string
}

export async function runReplayExchange(values: ReplayExchangeOptions): Promise<void> {
  const { port, speed, start: replayStart } = values
  const dataDir = values.data ?? loadConfig().replayDataDir
  const [{ startReplayExchange }, { parseAccountFlag }] = await Promise.all([import('../../replay-exchange/index.js'), import('../../replay-exchange/trading/accounts/accounts-file.js')])
  let accounts: ReturnType<typeof parseAccountFlag>[]
  try {
    accounts = (values.account ?? []).map(parseAccountFlag)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const exchange = await startReplayExchange({
    ...(dataDir === undefined ? {} : { dataDir: path.resolve(dataDir) }),
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(speed === undefined ? {} : { speed }),
    ...(replayStart === undefined ? {} : { replayStart }),
    ...(accounts.length === 0 ? {} : { accounts }),
    ...(values.state === undefined ? {} : { stateFile: path.resolve(values.state) }),
    port,
  }).catch((error: unknown) => {
    throw portTaken(error, 'replay-exchange', 'choose another with --port (0: any free port)')
  })
  process.stdout.write(`${JSON.stringify({ url: exchange.url, wsUrl: exchange.wsUrl })}\n`)
  process.stderr.write(`replay exchange listening on ${exchange.url} (data: ${dataDir ?? 'built-in data/'})\n`)
  await new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.stderr.write(`replay exchange: ${signal}, shutting down\n`)
      resolve()
    }
    process.once('SIGTERM', onSignal)
    process.once('SIGINT', onSignal)
  })
  await exchange.close()
}
