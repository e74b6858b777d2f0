import { Command } from 'commander'
import { backtestCommand } from './backtest-commands.js'
import { reportError } from './cli-errors.js'
import { cliContext } from './context.js'
import { marketCommand } from './market-commands.js'
import { OPERATOR_USAGE } from './operator-usage.js'
import { type Output, processOutput } from './output.js'
import { strategiesCommand } from './strategies-commands.js'
import { templatesCommand } from './templates-command.js'
import { webhooksCommand } from './webhooks-commands.js'

const CLIENT_HELP = `
Client commands talk HTTP to a Perpetua server, through perpetua/client. They read PERPETUA_URL
(default http://127.0.0.1:8080) and PERPETUA_API_KEY + PERPETUA_API_SECRET or PERPETUA_TOKEN, or a
profile: --profile NAME (or PERPETUA_PROFILE) picks one from ~/.config/perpetua/profiles.json
(PERPETUA_PROFILES names another file), {"NAME": {"url", "api_key", "api_secret" | "token"}}; a profile
named "default" fills in what the environment does not set. Results go to stdout (--json: the API's
answer exactly), progress and notes to stderr. Exit 0 done, 1 refused or failed (the API's message and
code on stderr), 2 usage error, 130 interrupted.`

/** The client commands' program: backtest, strategies, webhooks, market, templates. */
export function clientProgram(output: Output = processOutput): Command {
  const context = cliContext(output)
  const program = new Command('perpetua')
    .description('Perpetua: a market data gateway, strategies, backtests and webhooks for crypto futures traders')
    .option('--profile <name>', 'use this profile of the profile file (and nothing of the environment)')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) })
    .addHelpText('after', `${CLIENT_HELP}\n\n${OPERATOR_USAGE}\n`)
  for (const command of [backtestCommand(context), strategiesCommand(context), webhooksCommand(context), marketCommand(context), templatesCommand(context)]) {
    // exitOverride and the output settings are inherited only by commands made with .command();
    // these are built apart (one file per group), so they get them here, on every level.
    program.addCommand(inherit(command, program))
  }
  return program
}

function inherit(command: Command, parent: Command): Command {
  command.copyInheritedSettings(parent)
  for (const sub of command.commands) inherit(sub, command)
  return command
}

/** Runs a client command (argv without node and the script); resolves with the exit code. */
export async function runClientCommand(argv: string[], output: Output = processOutput): Promise<number> {
  const program = clientProgram(output)
  if (argv.length === 0) {
    program.outputHelp({ error: true })
    return 0
  }
  try {
    await program.parseAsync(argv, { from: 'user' })
    return 0
  } catch (error) {
    return reportError(error, output.err)
  }
}
