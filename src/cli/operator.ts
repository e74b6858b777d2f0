import { setTimeout as sleep } from 'node:timers/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { type Config, loadConfig } from '../config.js'
import { controlSocketPath, sendControlCommand } from '../control/control-socket.js'
import { inspectLock } from '../db/data-dir-lock.js'
import { socketDirFor } from '../db/pglite-host.js'
import { beginOpeningStorage, openStorage } from '../storage.js'
import { OPERATOR_USAGE } from './operator-usage.js'

/** Runs one operator command (argv starts with its name); usage errors exit 2. */
export async function runOperatorCommand(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  switch (command) {
    case 'serve':
      return runServe(loadConfig())
    case 'worker':
      return runWorker(loadConfig())
    case 'migrate':
      return runMigrate(loadConfig())
    case 'keys':
      if (rest[0] === 'create') return runKeysCreate(loadConfig(), rest.slice(1))
      break
    case 'users':
      if (rest[0] === 'set-plan') return runUsersSetPlan(loadConfig(), rest.slice(1))
      if (rest[0] === 'set-paper-balance') return runUsersSetPaperBalance(loadConfig(), rest.slice(1))
      break
    case 'tokens':
      if (rest[0] === 'issue') return runTokensIssue(loadConfig(), rest.slice(1))
      break
    case 'replay-exchange':
      return runReplayExchange(rest)
  }
  process.stderr.write(`${OPERATOR_USAGE}\n`)
  return 2
}

// Roles import their heavy modules (Fastify, pg-boss) only when they run: `keys create` starts in
// well under a second instead of ~3 s.
async function runServe(config: Config): Promise<number> {
  // The embedded database opens in its own thread while this one loads the HTTP stack and builds the
  // app (each ~0.3–0.7 s on a warm DATA_DIR on a busy 2-core host).
  const opening = beginOpeningStorage(config, 'serve')
  opening.opened.catch(() => undefined) // awaited, and so reported, by serve()
  const [{ pino }, { serve }] = await Promise.all([import('pino'), import('../serve.js')])
  const logger = pino({ level: config.logLevel })
  return untilSignal(logger, await serve(config, logger, opening))
}

async function runWorker(config: Config): Promise<number> {
  const [{ pino }, { work }] = await Promise.all([import('pino'), import('../worker.js')])
  const logger = pino({ level: config.logLevel })
  return untilSignal(logger, await work(config, logger))
}

/** Runs until SIGTERM or SIGINT, then stops the role gracefully; a second signal exits at once. */
async function untilSignal(logger: { info(obj: unknown, msg?: string): void; error(obj: unknown, msg?: string): void }, role: { stop(): Promise<void> }): Promise<number> {
  await new Promise<void>((resolve) => {
    let signals = 0
    const onSignal = (signal: NodeJS.Signals) => {
      if (++signals > 1) process.exit(130)
      logger.info({ signal }, 'shutting down: finishing work in flight')
      void role.stop().then(resolve, (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed')
        resolve()
      })
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  })
  logger.info({}, 'stopped')
  return 0
}

async function runMigrate(config: Config): Promise<number> {
  const storage = await openStorage(config, 'migrate')
  await storage.close()
  process.stdout.write(`${JSON.stringify({ applied: storage.migrationsApplied })}\n`)
  return 0
}

/** Runs in a live server when one holds the embedded DATA_DIR, else against the database directly. */
async function runKeysCreate(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { email: { type: 'string' }, scopes: { type: 'string' }, plan: { type: 'string' }, until: { type: 'string' } },
    strict: true,
  })
  const result = await runWhereTheDatabaseIs(config, 'keys.create', { email: values.email, scopes: values.scopes, plan: values.plan, until: values.until })
  process.stdout.write(`${JSON.stringify(result)}\n`)
  return 0
}

/** `--until` is a date (the plan lasts through that UTC day) or an ISO 8601 time; omitted, the plan has no end. */
async function runUsersSetPlan(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' }, plan: { type: 'string' }, until: { type: 'string' } }, strict: true })
  const result = await runWhereTheDatabaseIs(config, 'users.set-plan', { email: values.email, plan: values.plan, until: values.until })
  process.stdout.write(`${JSON.stringify(result)}\n`)
  return 0
}

/** The dry-run wallet deploys check their capital against (402 INSUFFICIENT_FUNDS). */
async function runUsersSetPaperBalance(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' }, amount: { type: 'string' } }, strict: true })
  const result = await runWhereTheDatabaseIs(config, 'users.set-paper-balance', { email: values.email, amount: values.amount })
  process.stdout.write(`${JSON.stringify(result)}\n`)
  return 0
}

/** An app token for a user (created if needed), as the sign-in endpoints would give; prints JSON. */
async function runTokensIssue(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' } }, strict: true })
  const result = await runWhereTheDatabaseIs(config, 'tokens.issue', { email: values.email })
  process.stdout.write(`${JSON.stringify(result)}\n`)
  return 0
}

/**
 * Runs an operator command where the database is: inside the server that holds an embedded DATA_DIR
 * (through its control socket), else here. A holder that does not answer yet (a server still starting,
 * a `migrate` running) is waited for, up to 30 s.
 */
async function runWhereTheDatabaseIs(config: Config, command: string, args: Record<string, unknown>): Promise<unknown> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const lock = config.databaseUrl ? { held: false as const } : inspectLock(config.dataDir)
    if (!lock.held) return runHere(config, command, args)
    try {
      return await sendControlCommand(controlSocketPath(socketDirFor(config.dataDir)), command, args)
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
  const [{ operatorCommands }, { createServices }] = await Promise.all([import('../control/commands.js'), import('../services.js')])
  const storage = await openStorage(config, command)
  try {
    const handler = operatorCommands(createServices(config, storage.database))[command]
    if (!handler) throw new Error(`unknown command ${command}`)
    return await handler(args)
  } finally {
    await storage.close()
  }
}

/** The replay exchange alone; --data wins over REPLAY_DATA_DIR (config.ts reads it, like every variable). */
async function runReplayExchange(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      data: { type: 'string' },
      speed: { type: 'string' },
      start: { type: 'string' },
      account: { type: 'string', multiple: true },
      state: { type: 'string' },
    },
    strict: true,
  })
  const port = values.port === undefined ? 0 : Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer from 0 to 65535 (got "${values.port}")`)
  const speed = values.speed === undefined ? undefined : Number(values.speed)
  if (speed !== undefined && !(speed > 0)) throw new Error(`--speed must be a positive number (got "${values.speed}")`)
  const replayStart = values.start === undefined ? undefined : Date.parse(values.start)
  if (replayStart !== undefined && Number.isNaN(replayStart)) throw new Error(`--start must be an ISO 8601 time (got "${values.start}")`)
  const dataDir = values.data ?? loadConfig().replayDataDir
  const [{ startReplayExchange }, { parseAccountFlag }] = await Promise.all([import('../replay-exchange/index.js'), import('../replay-exchange/trading/accounts/accounts-file.js')])
  const accounts = (values.account ?? []).map(parseAccountFlag)
  const exchange = await startReplayExchange({
    ...(dataDir === undefined ? {} : { dataDir: path.resolve(dataDir) }),
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(speed === undefined ? {} : { speed }),
    ...(replayStart === undefined ? {} : { replayStart }),
    ...(accounts.length === 0 ? {} : { accounts }),
    ...(values.state === undefined ? {} : { stateFile: path.resolve(values.state) }),
    port,
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
  return 0
}
