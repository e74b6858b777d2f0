import fs from 'node:fs'
import { Command } from 'commander'
import { reportError } from './cli-errors.js'
import { type Output, processOutput } from './output.js'

const CLIENT_HELP = `
Client commands (backtest, strategies, webhooks, market, templates) talk HTTP to a Perpetua server,
through perpetua/client. They read PERPETUA_URL (default http://127.0.0.1:8080) and PERPETUA_API_KEY +
PERPETUA_API_SECRET or PERPETUA_TOKEN, or a profile: --profile NAME (or PERPETUA_PROFILE) picks one
from ~/.config/perpetua/profiles.json (PERPETUA_PROFILES names another file), {"NAME": {"url",
"api_key", "api_secret" | "token"}}; a profile named "default" fills in what the environment does not
set. Results go to stdout (--json: the API's answer exactly), progress and notes to stderr.
Operator commands (serve, worker, migrate, keys, users, tokens, replay-exchange, history) run Perpetua or act on
its database, configured by the environment (README, "Configuration").
perpetua --version (or -V) prints the version. Every command takes --help. Exit 0 done, 1 refused or
failed (the API's message and code on stderr), 2 usage error, 130 interrupted.`

/**
 * The `perpetua` program around `commands`: one place gives every command and sub-command its --help
 * (and -h), the usage errors (exit 2, the problem named), --version and the output settings, so no
 * command parses flags of its own and none runs before its arguments are read.
 */
export function perpetuaProgram(commands: Command[]): Command {
  const program = new Command('perpetua')
    .description('Perpetua: a market data gateway, strategies, backtests and webhooks for crypto futures traders')
    .option('--profile <name>', 'client commands: use this profile of the profile file (and nothing of the environment)')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) })
    .addHelpText('after', CLIENT_HELP)
  // exitOverride and the output settings are inherited only by commands made with .command(); these
  // are built apart (one file per group), so they get them here, on every level.
  for (const command of commands) program.addCommand(inherit(command, program))
  return program
}

function inherit(command: Command, parent: Command): Command {
  command.copyInheritedSettings(parent)
  for (const sub of command.commands) inherit(sub, command)
  return command
}

/** Runs the program on argv (without node and the script); resolves with the exit code. No arguments: help, exit 2. */
export async function runProgram(program: Command, argv: string[], output: Output = processOutput): Promise<number> {
  if (argv.length === 0) {
    program.outputHelp({ error: true })
    return 2
  }
  // --version only as the whole command line: commander's program-wide --version would also take a
  // command's own (templates show ID --version 2).
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    output.out(packageVersion())
    return 0
  }
  try {
    await program.parseAsync(argv, { from: 'user' })
    return 0
  } catch (error) {
    return reportError(error, output.err)
  }
}

/** package.json's version: two folders up both from src/cli (tsx) and from dist/cli (the build; the bundle keeps this file's URL). */
function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
  } catch {
    return 'unknown'
  }
}
