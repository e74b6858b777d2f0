import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'
import { REPO_ROOT } from './server.js'

export interface BenchReplay {
  url: string
  /** The replay exchange's process (its CPU time can be read from /proc). */
  pid: number
  /** Requests the replay exchange has served, by path, and archive zips (its /__replay/stats). */
  stats(): Promise<ReplayStats>
  stop(): void
}

export interface ReplayStats {
  requests: number
  byPath: Record<string, number>
  archiveFiles: number
}

/** A replay exchange's /__replay/stats. */
export async function replayStats(url: string): Promise<ReplayStats> {
  return (await (await fetch(`${url}/__replay/stats`)).json()) as ReplayStats
}

/** A standalone replay exchange (`perpetua replay-exchange`) on a free port, so its upstream calls can be counted. */
export async function startBenchReplay(args: string[] = []): Promise<BenchReplay> {
  const child: ChildProcess = spawn(process.execPath, [path.join(REPO_ROOT, 'dist', 'cli.js'), 'replay-exchange', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`replay exchange exited with ${code}`)))
  })
  const { url } = JSON.parse(line) as { url: string }
  return {
    url,
    pid: child.pid!,
    stats: () => replayStats(url),
    stop: () => void child.kill('SIGTERM'),
  }
}
