import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { poll } from '../support/poll.js'

export { poll }

/**
 * The `perpetua` command as a real child process, run from source (`node --import tsx src/cli.ts`)
 * with the project root as cwd, so these tests need no build.
 */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

const children = new Set<ChildProcess>()

export interface CliResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/**
 * A clean environment plus `env`: nothing of the test runner's own environment (DATABASE_URL,
 * NODE_TEST_CONTEXT, …) leaks into the command under test.
 */
function childEnv(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {}
  for (const key of ['PATH', 'TMPDIR', 'HOME', 'LANG']) {
    const value = process.env[key]
    if (value !== undefined) base[key] = value
  }
  // Two test files run at once: a child never takes the fixed metrics port unless the test asks for one.
  return { ...base, METRICS_ADDR: 'off', ...env }
}

function spawnCli(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: PROJECT_ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  child.once('exit', () => children.delete(child))
  return child
}

/** Runs one command to completion; fails the test if it takes longer than `timeoutMs`. */
export async function runCli(args: string[], env: Record<string, string>, timeoutMs = 90_000): Promise<CliResult> {
  const child = spawnCli(args, env)
  const output = collect(child)
  const exit = await waitForExit(child, timeoutMs, `perpetua ${args.join(' ')}`)
  return { ...exit, ...output() }
}

/** Starts a long-running command (e.g. `worker`); read its output as it comes. */
export function startCli(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => { stdout: string; stderr: string } } {
  const child = spawnCli(args, env)
  return { child, output: collect(child) }
}

/**
 * Starts a command on a terminal of its own: util-linux `script` gives it a pseudo-terminal as stdin,
 * stdout and stderr (both arrive on the returned stdout), for the prompts a command shows only there.
 * Write the answers to `child.stdin`. Undefined where `script` is missing.
 */
export function startCliOnTerminal(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => { stdout: string; stderr: string } } | undefined {
  const script = ['/usr/bin/script', '/bin/script'].find((file) => fs.existsSync(file))
  if (!script) return undefined
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`
  const command = [process.execPath, '--import', 'tsx', 'src/cli.ts', ...args].map(quote).join(' ')
  const child = spawn(script, ['-qec', command, '/dev/null'], { cwd: PROJECT_ROOT, env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'] })
  children.add(child)
  child.once('exit', () => children.delete(child))
  return { child, output: collect(child) }
}

/** Ends every child this file started that is still running (for after() hooks). */
export async function killChildren(): Promise<void> {
  await Promise.all(
    [...children].map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGKILL')
      await new Promise((resolve) => child.once('exit', resolve))
    }),
  )
}

export interface ServerProcess {
  child: ChildProcess
  url: string
  port: number
  stdout(): string
  stderr(): string
  /** Resolves with the exit status; rejects if the process has not exited within `timeoutMs`. */
  exited(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/**
 * Starts `perpetua serve` on PORT=0 and resolves once it answers /healthz. The port comes from the
 * server's "perpetua is serving" log line; the wait polls with a deadline and fails early with the
 * server's stderr if the process exits first.
 */
export async function startServe(env: Record<string, string>, timeoutMs = 120_000): Promise<ServerProcess> {
  const child = spawnCli(['serve'], { PORT: '0', LOG_LEVEL: 'info', ...env })
  const output = collect(child)
  const exit = waitForExit(child, undefined, 'perpetua serve')
  let exitedEarly = false
  const markExited = () => (exitedEarly = true)
  void exit.then(markExited, markExited)
  const url = await poll(`perpetua serve to log its URL\n${output().stderr}`, timeoutMs, () => {
    if (exitedEarly) throw new Error(`perpetua serve exited before serving:\n${output().stderr}\n${output().stdout}`)
    return servingUrl(output().stdout)
  })
  await poll('GET /healthz to answer 200', 30_000, async () => {
    if (exitedEarly) throw new Error(`perpetua serve exited:\n${output().stderr}`)
    const res = await fetch(`${url}/healthz`).catch(() => undefined)
    return res?.status === 200 ? true : undefined
  })
  return {
    child,
    url,
    port: Number(new URL(url).port),
    stdout: () => output().stdout,
    stderr: () => output().stderr,
    exited: (ms = 30_000) =>
      Promise.race([
        exit,
        new Promise<never>((_, reject) => {
          const timer = setTimeout(() => reject(new Error(`perpetua serve did not exit within ${ms} ms`)), ms)
          void exit.finally(() => clearTimeout(timer))
        }),
      ]),
  }
}

function servingUrl(stdout: string): string | undefined {
  for (const line of stdout.split('\n')) {
    if (!line.includes('perpetua is serving')) continue
    const entry = JSON.parse(line) as { url?: string }
    if (entry.url) return entry.url
  }
  return undefined
}


function collect(child: ChildProcess): () => { stdout: string; stderr: string } {
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  return () => ({ stdout, stderr })
}

function waitForExit(
  child: ChildProcess,
  timeoutMs: number | undefined,
  what: string,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            child.kill('SIGKILL')
            reject(new Error(`${what} did not finish within ${timeoutMs} ms`))
          }, timeoutMs)
    // 'close', not 'exit': stdout and stderr are fully read by then.
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal })
    })
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
  })
}

/** Parses stdout that must be exactly one line of JSON and nothing else. */
export function parseSingleJsonLine(stdout: string): unknown {
  if (!stdout.endsWith('\n') || stdout.indexOf('\n') !== stdout.length - 1) {
    throw new Error(`stdout is not exactly one line: ${JSON.stringify(stdout)}`)
  }
  return JSON.parse(stdout)
}
