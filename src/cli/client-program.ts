import type { Command } from 'commander'
import { backtestCommand } from './backtest/commands.js'
import { cliContext } from './context.js'
import { marketCommand } from './market-commands.js'
import { operatorCommands } from './operator/program.js'
import { type Output, processOutput } from './output.js'
import { perpetuaProgram, runProgram } from './program.js'
import { strategiesCommand } from './strategies-commands.js'
import { sweepCommand } from './sweep/commands.js'
import { templatesCommand } from './templates-command.js'
import { webhooksCommand } from './webhooks/commands.js'

/** The whole program: the client commands (backtest, sweep, strategies, webhooks, market, templates) and the operator ones. */
export function clientProgram(output: Output = processOutput): Command {
  const context = cliContext(output)
  return perpetuaProgram([
    backtestCommand(context),
    sweepCommand(context),
    strategiesCommand(context),
    webhooksCommand(context),
    marketCommand(context),
    templatesCommand(context),
    ...operatorCommands(),
  ])
}

/** Runs a client command (argv without node and the script); resolves with the exit code. */
export function runClientCommand(argv: string[], output: Output = processOutput): Promise<number> {
  return runProgram(clientProgram(output), argv, output)
}
