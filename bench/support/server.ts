import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { log } from './log.js'

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CLI = path.join(REPO_ROOT, 'dist', 'cli.js')
/** Node's flags in `npm start` (package.json), so a bench serves as an operator does: node FLAGS dist/cli.js serve. */
const SERVE_NODE_FLAGS = startFlags(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).scripts.start as string)

function startFlags(start: string): string[] {
  const words = start.split(/\s+/)
  if (words[0] !== 'node' || !words.includes('dist/cli.js')) throw new Error(`npm start is not "node [flags] dist/cli.js serve": ${start}`)
  return words.slice(1, words.indexOf('dist/cli.js'))
}

/** A `perpetua serve` child process on its own port and temporary DATA_DIR. */
export interface BenchServer {
  url: string
  dataDir: string
  pid: number
  /** From spawning the process to the first 200 from GET /healthz (polled every 20 ms). */
  readyMs: number
  /** Where --cpu-prof writes, when profiling. */
  profileDir: string | undefined
  /** SIGTERM, then waits for a graceful exit (SIGKILL after 20 s) and removes DATA_DIR. */
  stop(): Promise<void>
}

export interface StartServerOptions {
  /** Extra environment on top of the bench defaults (PORT, HOST, DATA_DIR, LOG_LEVEL=warn). */
  env?: Record<string, string>
  cpuProfile?: boolean
  /** Serve from this DATA_DIR and leave it in place on stop (default: a fresh temporary one, removed on stop). */
  dataDir?: string
}

/** Runs `npm run build` when dist/cli.js is missing or older than any file under src/. */
export async function ensureBuilt(): Promise<void> {
  const built = mtimeMs(CLI)
  const newestSource = newestMtimeMs(path.join(REPO_ROOT, 'src'))
  if (built !== undefined && built >= newestSource) return
  log(built === undefined ? 'dist/ is missing: npm run build' : 'src/ changed since the last build: npm run build')
  const code = await exitCodeOf(spawn('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: ['ignore', process.stderr, process.stderr] }))
  if (code !== 0) throw new Error(`npm run build failed with exit code ${code}`)
}

export async function startServer(options: StartServerOptions = {}): Promise<BenchServer> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-'))
  const profileDir = options.cpuProfile ? fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-prof-')) : undefined
  const port = await freePort()
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    METRICS_ADDR: 'off', // several nodes on one host: never a fixed port
    ...options.env,
  }
  const nodeArgs = [...SERVE_NODE_FLAGS, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])]
  const spawnedAt = performance.now()
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'serve'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  // The server logs (pino) go to its stdout; keep ours clean for the result.
  child.stdout.pipe(process.stderr)
  child.stderr.pipe(process.stderr)
  const exited = exitCodeOf(child)
  const url = `http://127.0.0.1:${port}`
  const removeDirs = () => {
    if (options.dataDir === undefined) fs.rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    await waitForHealthz(url, exited, 60_000)
  } catch (error) {
    child.kill('SIGKILL')
    await exited
    removeDirs()
    throw error
  }
  const readyMs = Math.round(performance.now() - spawnedAt)
  log(`server pid ${child.pid} on ${url} after ${readyMs} ms, DATA_DIR ${dataDir}`)

  let stopping: Promise<void> | undefined
  return {
    url,
    dataDir,
    pid: child.pid!,
    readyMs,
    profileDir,
    stop() {
      stopping ??= (async () => {
        child.kill('SIGTERM')
        const timer = setTimeout(() => {
          log(`server pid ${child.pid} still running 20 s after SIGTERM: SIGKILL`)
          child.kill('SIGKILL')
        }, 20_000)
        const code = await exited
        clearTimeout(timer)
        if (code !== 0) log(`server exited with code ${code}`)
        removeDirs()
      })()
      return stopping
    },
  }
}

/** Polls GET /healthz until it answers 200; fails early if the server process exits. */
async function waitForHealthz(url: string, exited: Promise<number | null>, timeoutMs: number): Promise<void> {
  let exitCode: number | null | undefined
  void exited.then((code) => (exitCode = code))
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (exitCode !== undefined) throw new Error(`the server exited with code ${exitCode} before /healthz answered`)
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })
      await response.arrayBuffer()
      if (response.ok) return
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`/healthz did not answer 200 within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A port the kernel just handed out. Another process could take it before the server binds; unlikely on a bench host. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

function exitCodeOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : null)))
  })
}

function mtimeMs(file: string): number | undefined {
  try {
    return fs.statSync(file).mtimeMs
  } catch {
    return undefined
  }
}

function newestMtimeMs(dir: string): number {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs)
  }
  return newest
}

/** A process's resident set now and at its peak, from /proc (Linux), in MB. */
export function memoryOf(pid: number): { rss_mb: number; peak_rss_mb: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN)
  return { rss_mb: Math.round(kb('VmRSS') / 1024), peak_rss_mb: Math.round(kb('VmHWM') / 1024) }
}

/**
 * CPU time a process has used so far, all its threads, user + system, in ms (/proc, Linux; the kernel
 * counts in USER_HZ ticks, 100 per second on every Linux Node supports). Steadier than wall time on a
 * shared host: it does not grow while the process waits for a core.
 */
export function cpuMsOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ') // the command name may hold spaces
  return (Number(fields[11]) + Number(fields[12])) * 10 // utime and stime, fields 14 and 15 of the line
}
