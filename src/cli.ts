#!/usr/bin/env node
import { OPERATOR_COMMANDS } from './cli/operator-usage.js'

// The entry of `perpetua`. Operator commands (serve, worker, keys …) load the server's modules;
// client commands (backtest, strategies, webhooks, market …) load only the HTTP client, commander and
// the output libraries, so they start fast and never load Fastify or pg.
async function main(argv: string[]): Promise<number> {
  if (argv[0] !== undefined && OPERATOR_COMMANDS.has(argv[0])) {
    const { runOperatorCommand } = await import('./cli/operator.js')
    return runOperatorCommand(argv)
  }
  const { runClientCommand } = await import('./cli/client-program.js')
  return runClientCommand(argv)
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`perpetua: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
