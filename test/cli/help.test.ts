import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import type { Command } from 'commander'
import { clientProgram } from '../../src/cli/client-program.js'
import { tempDir } from '../support/database.js'
import { type CliResult, PROJECT_ROOT, runCli } from './cli-process.js'

// --help on every command and sub-command, in real processes: help on stdout, exit 0, and nothing
// done (serve would never exit, migrate and keys would make DATA_DIR, webhooks listen its certificate).

/** Every command path of the program, e.g. ['keys', 'create'], from the program itself so a new command is covered. */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.filter((sub) => sub.name() !== 'help').flatMap((sub) => [[...prefix, sub.name()], ...commandPaths(sub, [...prefix, sub.name()])])
}

/** Runs `tasks` at most `width` at a time (each is a child process). */
async function inBatches<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = []
  for (let i = 0; i < tasks.length; i += width) results.push(...(await Promise.all(tasks.slice(i, i + width).map((task) => task()))))
  return results
}

describe('perpetua --help, --version and usage errors', () => {
  const root = tempDir('cli-help')
  const dataDir = path.join(root, 'data') // must never appear
  const config = path.join(root, 'config')
  const env = { DATA_DIR: dataDir, XDG_CONFIG_HOME: config, HOME: root, PORT: '0', PERPETUA_URL: 'http://127.0.0.1:9', PERPETUA_TOKEN: 'x' }
  after(() => fs.rmSync(root, { recursive: true, force: true }))

  const noSideEffects = () => assert.deepEqual(fs.readdirSync(root), [], `something was created: ${fs.readdirSync(root)}`)

  it('prints the help of every command and sub-command on stdout and exits 0, doing nothing', async () => {
    const paths = commandPaths(clientProgram())
    assert.ok(paths.length >= 35, `only ${paths.length} commands found`)
    for (const name of [['serve'], ['migrate'], ['keys', 'create'], ['tokens', 'issue'], ['users', 'set-plan'], ['replay-exchange'], ['webhooks', 'listen'], ['backtest', 'run']]) {
      assert.ok(paths.some((p) => p.join(' ') === name.join(' ')), `${name.join(' ')} is not in the program`)
    }
    // -h for a few, --help for all; a serve that ignored it would never exit (runCli fails after 60 s).
    const runs = [...paths.map((p) => [...p, '--help']), ['serve', '-h'], ['keys', 'create', '-h'], ['--help']]
    const results = await inBatches(runs.map((args) => () => runCli(args, env, 60_000).then((result) => ({ args, result }))), 4)
    for (const { args, result } of results) {
      const name = args.filter((arg) => !arg.startsWith('-')).join(' ')
      assert.equal(result.code, 0, `perpetua ${args.join(' ')} exited ${result.code}: ${result.stderr}`)
      assert.ok(result.stdout.startsWith(`Usage: perpetua${name ? ` ${name}` : ''} `), `perpetua ${args.join(' ')} printed:\n${result.stdout}`)
      assert.match(result.stdout, /-h, --help +display help for command/)
      assert.equal(result.stderr, '', `perpetua ${args.join(' ')} wrote to stderr: ${result.stderr}`)
    }
    noSideEffects()
  })

  it('--version prints the package version; no arguments print the help on stderr and exit 2', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }
    const printed = await runCli(['--version'], env)
    assert.deepEqual([printed.code, printed.stdout], [0, `${version}\n`])
    const bare = await runCli([], env)
    assert.equal(bare.code, 2)
    assert.equal(bare.stdout, '')
    assert.match(bare.stderr, /^Usage: perpetua \[options\] \[command\]/)
    assert.match(bare.stderr, /keys +API keys/)
  })

  it('a usage error exits 2 naming the problem, before any database is opened', async () => {
    const cases: [string[], RegExp][] = [
      [['keys', 'create', '--email', 'a@example.test', '--scopes', 'market:read,trading'], /unknown scope "trading"; known scopes: market:read/],
      [['keys', 'create', '--email', 'a@example.test'], /required option '--scopes <list>' not specified/],
      [['keys', 'create', '--email', 'a@example.test', '--scopes', 'market:read', '--until', '2099-01-01'], /--until needs --plan/],
      [['users', 'set-plan', '--email', 'a@example.test', '--plan', 'gold'], /--plan must be one of free, standard, pro/],
      [['users', 'set-paper-balance', '--email', 'nobody', '--amount', '5'], /--email must be an email address/],
      [['tokens', 'issue', '--email', 'a@example.test', '--bogus'], /unknown option '--bogus'/],
      [['serve', '--port', '99999'], /--port <port>' argument '99999' is invalid\. not a port/],
      [['replay-exchange', '--speed', '0'], /--speed <factor>' argument '0' is invalid\. must be above 0/],
      [['migrate', 'now'], /too many arguments for 'migrate'/],
      [['backtest', 'show'], /missing required argument 'id'/],
      [['backtest', 'run', '--bogus'], /unknown option '--bogus'/],
      [['nonsense'], /unknown command 'nonsense'/],
    ]
    const results: CliResult[] = await inBatches(cases.map(([args]) => () => runCli(args, env)), 4)
    cases.forEach(([args, message], i) => {
      assert.equal(results[i]!.code, 2, `perpetua ${args.join(' ')}: ${results[i]!.stderr}`)
      assert.match(results[i]!.stderr, message, `perpetua ${args.join(' ')}`)
    })
    noSideEffects()
  })
})
