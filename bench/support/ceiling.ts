import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'
import { type LoadOptions, type LoadRun, type LoadSummary, runLoad } from './load.js'
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

/** `run`'s throughput as a share of the bare server's, to three decimals. */
export function ratio(run: LoadRun, bare: LoadRun): number {
  return Math.round((1000 * run.summary.req_per_s) / Math.max(1, bare.summary.req_per_s)) / 1000
}

/**
 * Loads a bare Fastify hello-world process (bench/support/bare-fastify.ts) with the given settings
 * and stops it: the ceiling a suite divides its own routes by, measured in the same run.
 */
export async function measureBareFastify(load: LoadOptions): Promise<LoadRun> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'support', 'bare-fastify.ts')], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  try {
    const line = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout! }).once('line', resolve)
      child.once('exit', (code) => reject(new Error(`the bare Fastify server exited with ${code}`)))
    })
    const { url } = JSON.parse(line) as { url: string }
    return await runLoad('bare_fastify', { url, path: '/' }, load)
  } finally {
    child.kill('SIGTERM')
    await exited
  }
}

/** A summary with its ratio to the bare server beside it. */
export function withRatio(run: LoadRun, bare: LoadRun): LoadSummary & { ratio_to_bare: number } {
  return { ...run.summary, ratio_to_bare: ratio(run, bare) }
}
