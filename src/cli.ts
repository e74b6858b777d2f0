#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { pino } from 'pino'
import { type Config, ConfigError, loadConfig } from './config.js'
import { operatorCommands } from './control/commands.js'
import { controlSocketPath, sendControlCommand } from './control/control-socket.js'
import { inspectLock } from './db/data-dir-lock.js'
import { socketDirFor } from './db/pglite-host.js'
import { serve } from './serve.js'
import { createServices } from './services.js'
import { openStorage } from './storage.js'

const USAGE = `usage: perpetua <command>

  serve                                   the HTTP API (what npm start runs)
  migrate                                 apply database migrations and exit
  keys create --email E --scopes a,b      create the user if needed and an API key; prints JSON

Configuration comes from environment variables; see the README.`

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  const config = loadConfig()
  switch (command) {
    case 'serve':
      return runServe(config)
    case 'migrate':
      return runMigrate(config)
    case 'keys':
      if (rest[0] === 'create') return runKeysCreate(config, rest.slice(1))
      break
  }
  process.stderr.write(`${USAGE}\n`)
  return command === undefined || command === '--help' || command === 'help' ? 0 : 2
}

async function runServe(config: Config): Promise<number> {
  const logger = pino({ level: config.logLevel })
  const server = await serve(config, logger)
  await new Promise<void>((resolve) => {
    let signals = 0
    const onSignal = (signal: NodeJS.Signals) => {
      if (++signals > 1) process.exit(130) // a second signal: stop waiting
      logger.info({ signal }, 'shutting down: finishing in-flight requests')
      void server.stop().then(resolve, (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed')
        resolve()
      })
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  })
  logger.info('stopped')
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
  const { values } = parseArgs({ args, options: { email: { type: 'string' }, scopes: { type: 'string' } }, strict: true })
  const request = { email: values.email, scopes: values.scopes }
  let result: unknown
  if (!config.databaseUrl && inspectLock(config.dataDir).held) {
    result = await sendControlCommand(controlSocketPath(socketDirFor(config.dataDir)), 'keys.create', request)
  } else {
    const storage = await openStorage(config, 'keys create')
    try {
      result = await operatorCommands(createServices(config, storage.database))['keys.create']!(request)
    } finally {
      await storage.close()
    }
  }
  process.stdout.write(`${JSON.stringify(result)}\n`)
  return 0
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`perpetua: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
