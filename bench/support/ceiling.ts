import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import { type LoadOptions, type LoadRun, type LoadSummary, type LoadTarget, runLoad } from './load.js'
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
  stop(): Promise<void>
}

/** `bytesDir`: files the bare server answers at /bytes/<name> (the same-bytes ceiling, see sameBytesCeiling). */
export async function startCeiling(bytesDir?: string): Promise<Ceiling> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'support', 'bare-fastify.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...(bytesDir ? { BARE_BYTES_DIR: bytesDir } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    child.kill('SIGTERM')
    await exited
  }
  try {
    const line = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout! }).once('line', resolve)
      child.once('exit', (code) => reject(new Error(`the bare Fastify server exited with ${code}`)))
    })
    return { url: (JSON.parse(line) as { url: string }).url, pid: child.pid!, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** A route's run beside the bare server's run just before it. */
export interface Paired {
  run: LoadRun
  bare: LoadRun
  ratio: number
}

/**
 * Loads the bare server, then `target`, with the same settings. Other work on a shared host moves
 * throughput by a third within a minute (bare Fastify measured 22.0k and 16.9k req/s in two runs
 * minutes apart), so each route is divided by a bare run taken right before it, not one per suite.
 */
export async function againstCeiling(ceiling: Ceiling, title: string, target: LoadTarget, load: LoadOptions): Promise<Paired> {
  const bare = await runLoad(`bare_fastify (before ${title})`, { url: ceiling.url, path: '/', pid: ceiling.pid }, load)
  const run = await runLoad(title, target, load)
  return { run, bare, ratio: Math.round((1000 * run.summary.req_per_s) / Math.max(1, bare.summary.req_per_s)) / 1000 }
}

/**
 * The second, fair ceiling for a route with a large body: the bare server sending the bytes the route
 * sent (fetched once from `target`, kept in the ceiling's bytes directory as `name`), with the same load.
 */
export async function sameBytesCeiling(ceiling: Ceiling, bytesDir: string, name: string, target: LoadTarget, load: LoadOptions): Promise<LoadRun & { bytes: number }> {
  const response = await fetch(`${target.url}${target.path}`)
  if (!response.ok) throw new Error(`${target.path} answered ${response.status}`)
  const body = Buffer.from(await response.arrayBuffer())
  fs.writeFileSync(path.join(bytesDir, name), body)
  return { ...(await runLoad(`bare_fastify_same_bytes (${name})`, { url: ceiling.url, path: `/bytes/${name}`, pid: ceiling.pid }, load)), bytes: body.length }
}

/** A route's summary with the bare server's throughput and the ratio beside it. */
export function withRatio(paired: Paired): LoadSummary & { bare_req_per_s: number; ratio_to_bare: number } {
  const bareCpu = paired.bare.summary.server_cpu_us_per_req
  const ownCpu = paired.run.summary.server_cpu_us_per_req
  return {
    ...paired.run.summary,
    bare_req_per_s: paired.bare.summary.req_per_s,
    ratio_to_bare: paired.ratio,
    // The same ratio in server CPU per request (bare's cost ÷ ours): what the route would keep if CPU, not the shared host, set the pace.
    ...(bareCpu !== undefined && ownCpu ? { bare_server_cpu_us_per_req: bareCpu, cpu_ratio_to_bare: Math.round((1000 * bareCpu) / ownCpu) / 1000 } : {}),
    ...(paired.bare.summary.client_cpu_us_per_req !== undefined ? { bare_client_cpu_us_per_req: paired.bare.summary.client_cpu_us_per_req } : {}),
  }
}
