import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { type LoadOptions, type LoadRun, type LoadTarget, runLoad } from './load.js'
import { REPO_ROOT } from './server.js'

/** A goal as the reports print it: the measured value, the bound, and whether the value met it. */
export interface Goal {
  value: number
  at_least?: number
  at_most?: number
  met: boolean
}

export function atLeast(value: number, bound: number): Goal {
  return { value, at_least: bound, met: value >= bound }
}

export function atMost(value: number, bound: number): Goal {
  return { value, at_most: bound, met: value <= bound }
}

/** A bare Fastify hello-world process (bench/support/bare-fastify.ts): the ceiling the HTTP benches divide by. */
export interface Ceiling {
  url: string
  pid: number
  /** Where the bare server reads the bodies it answers at /bytes/<name> (a folder of its own, removed at stop). */
  bytesDir: string
  stop(): Promise<void>
}

export async function startCeiling(): Promise<Ceiling> {
  const bytesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-bytes-'))
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'support', 'bare-fastify.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, BARE_BYTES_DIR: bytesDir },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    child.kill('SIGTERM')
    await exited
    fs.rmSync(bytesDir, { recursive: true, force: true })
  }
  try {
    const line = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout! }).once('line', resolve)
      child.once('exit', (code) => reject(new Error(`the bare Fastify server exited with ${code}`)))
    })
    return { url: (JSON.parse(line) as { url: string }).url, pid: child.pid!, bytesDir, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** A value measured round after round: its median, its spread, and each round's. */
export interface Spread {
  median: number
  min: number
  max: number
  rounds: number[]
}

export function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
  return { median: round3(median), min: round3(sorted[0]!), max: round3(sorted.at(-1)!), rounds: values.map(round3) }
}

/**
 * A route against the bare server answering the same bytes (issue 36's one measure), round after round: in
 * each round the bare server's run, then the route's, with the same load. The ratio is bare's server CPU per
 * request ÷ the route's (1.0 = as cheap as bare Fastify doing the same work; DESIGN §9: on a 2-core host the
 * load generator's own CPU caps throughput ratios), each process counted whole (every thread, user and system).
 */
export interface Paired {
  rounds: { bare: LoadRun; run: LoadRun }[]
  cpu_ratio: Spread
  throughput_ratio: Spread
  /** The body's size, as the route sent it and the bare server sends it back. */
  bytes: number
}

/**
 * Fetches the route's answer once (signed, when the target signs), has the bare server keep those bytes as
 * `name` (and sends it the same signed requests), then measures `rounds` rounds. Other work on a shared host moves throughput by a third within a
 * minute (bare Fastify measured 22.0k and 16.9k req/s minutes apart), so each route run is divided by the
 * bare run taken just before it, and the rounds' spread says how far to trust the median.
 */
export async function againstSameBytes(ceiling: Ceiling, name: string, target: LoadTarget, load: LoadOptions, rounds: number): Promise<Paired> {
  const method = target.method ?? 'GET'
  const headers = target.signers?.[0]?.headers(method, target.path)
  const response = await fetch(`${target.url}${target.path}`, { method, ...(headers ? { headers } : {}) })
  if (!response.ok) throw new Error(`${target.path} answered ${response.status}`)
  const body = Buffer.from(await response.arrayBuffer())
  fs.writeFileSync(path.join(ceiling.bytesDir, name), body)
  // The same requests too: signed when the route is (bare reads the headers and ignores them), so both servers
  // parse the same bytes and the load generator spends the same CPU beside each (it shares the host's cores).
  const bare: LoadTarget = { url: ceiling.url, path: `/bytes/${name}`, pid: ceiling.pid, ...(target.signers ? { signers: target.signers } : {}) }
  const measured: Paired['rounds'] = []
  for (let k = 1; k <= rounds; k++) {
    const round = rounds > 1 ? ` round ${k}/${rounds}` : ''
    measured.push({ bare: await runLoad(`bare_fastify_same_bytes (${name})${round}`, bare, load), run: await runLoad(`${name}${round}`, target, load) })
  }
  return {
    rounds: measured,
    cpu_ratio: spread(measured.map(({ bare, run }) => (bare.summary.server_cpu_us_per_req ?? 0) / Math.max(1, run.summary.server_cpu_us_per_req ?? 0))),
    throughput_ratio: spread(measured.map(({ bare, run }) => run.summary.req_per_s / Math.max(1, bare.summary.req_per_s))),
    bytes: body.length,
  }
}

/** The round whose CPU ratio is the median's (the middle one): its runs and its profile window stand for the route. */
export function medianRound(paired: Paired): { bare: LoadRun; run: LoadRun } {
  const order = paired.rounds.map((_, k) => k).sort((a, b) => paired.cpu_ratio.rounds[a]! - paired.cpu_ratio.rounds[b]!)
  return paired.rounds[order[(order.length - 1) >> 1]!]!
}

/** What a report prints of a route: the median round's figures, each side's CPU per request, the ratios and their spread. */
export function withRatio(paired: Paired) {
  const { bare, run } = medianRound(paired)
  return {
    ...run.summary,
    body_bytes: paired.bytes,
    bare_req_per_s: bare.summary.req_per_s,
    bare_server_cpu_us_per_req: bare.summary.server_cpu_us_per_req,
    bare_server_cpu_us_per_req_by_thread: bare.summary.server_cpu_us_per_req_by_thread,
    bare_client_cpu_us_per_req: bare.summary.client_cpu_us_per_req,
    server_cpu_us_per_req_rounds: paired.rounds.map((r) => r.run.summary.server_cpu_us_per_req),
    bare_server_cpu_us_per_req_rounds: paired.rounds.map((r) => r.bare.summary.server_cpu_us_per_req),
    cpu_ratio_to_bare: paired.cpu_ratio,
    throughput_ratio_to_bare: paired.throughput_ratio,
  }
}

/** Every run of a measured route, named for a report's failure checks. */
export function runsOf(name: string, paired: Paired): Record<string, LoadRun> {
  return Object.fromEntries(paired.rounds.flatMap(({ bare, run }, k) => [[`${name}_round_${k + 1}`, run], [`bare_same_bytes_${name}_round_${k + 1}`, bare]]))
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000
}
