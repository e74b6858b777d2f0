#!/usr/bin/env node
import { OPERATOR_COMMANDS } from './cli/operator/program.js'

// The entry of `perpetua`. Operator commands (serve, worker, keys …) load the server's modules when
// they run; client commands (backtest, strategies, webhooks, market …) load only the HTTP client,
// commander and the output libraries, so they start fast and never load Fastify or pg. Both kinds
// share one program (src/cli/program.ts): --help, --version and usage errors work the same everywhere.
async function main(argv: string[]): Promise<number> {
  if (argv[0] !== undefined && OPERATOR_COMMANDS.has(argv[0])) {
    const [{ operatorCommands }, { perpetuaProgram, runProgram }] = await Promise.all([import('./cli/operator/program.js'), import('./cli/program.js')])
    return runProgram(perpetuaProgram(operatorCommands()), argv)
  }
  const { runClientCommand } = await import('./cli/client-program.js')
  return runClientCommand(argv)
}

// `perpetua … | head`: a reader that stops early ends the command quietly, not with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
    process.exit()
  })
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
