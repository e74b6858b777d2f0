import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { SHARED_DATA } from './backtest-jobs.js'
import { atLeast } from './support/ceiling.js'
import { cpuMicros } from './support/load.js'
import { log } from './support/log.js'
import { startBenchReplay } from './support/replay.js'
import { ensureBuilt, REPO_ROOT } from './support/server.js'
import type { SuiteResult } from './support/suite.js'

/** Issue 25: a prefill from the archive stores at least a million bars per second on this machine. */
const GOAL_BARS_PER_S = 1_000_000
/** What issue 25 prefills: BTCUSDT 1h 2019-09..2026-05 and 5m 2023-01..2026-02 (shared/data's 5m series ends on 2026-02-19). */
const PREFILLS = [
  ['--symbols', 'BTCUSDT', '--intervals', '1h', '--start', '2019-09-01', '--end', '2026-05-31T23:00:00Z'],
  ['--symbols', 'BTCUSDT', '--intervals', '5m', '--start', '2023-01-01', '--end', '2026-02-19T23:55:00Z'],
]

interface FetchReport {
  fetched: { symbol: string; interval: string; bars: number; archive_files: number; rest_requests: number; klines_ms: number; klines_cpu_ms: number; ms: number }[]
  bars: number
  ms: number
  refused_files: number
}

/**
 * `perpetua history fetch --json` (dist/cli.js) against a standalone replay exchange over shared/data,
 * its clock at 2026-05-17. Twice, each on a fresh DATA_DIR: first while the replay makes each archive
 * file on its first request (a cost Binance's static archive does not have), then with its files made.
 * Bars per second: bars stored over the command's own time for the klines (not process start, and not
 * the funding, which follows them over REST).
 */
export async function run(): Promise<SuiteResult> {
  if (!SHARED_DATA) throw new Error('no shared/data/binance-um-futures beside the checkout (the 5m series is not in data/)')
  await ensureBuilt()
  const replay = await startBenchReplay(['--data', SHARED_DATA, '--start', '2026-05-17T00:00:00Z'])
  try {
    const pass = async (label: string) => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-history-'))
      try {
        const before = await replay.stats()
        const replayCpuBefore = cpuMicros(replay.pid)
        const reports: FetchReport[] = []
        for (const args of PREFILLS) {
          const { stdout } = await promisify(execFile)(process.execPath, [path.join(REPO_ROOT, 'dist', 'cli.js'), 'history', 'fetch', ...args, '--json'], {
            env: { ...process.env, DATA_DIR: dataDir, UPSTREAM_URL: replay.url, UPSTREAM_ARCHIVE_URL: replay.url, LOG_LEVEL: 'warn' },
            maxBuffer: 16 * 1024 * 1024,
          })
          reports.push(JSON.parse(stdout) as FetchReport)
        }
        const after = await replay.stats()
        const replayCpuMs = Math.round((cpuMicros(replay.pid) - replayCpuBefore) / 1000)
        const bars = reports.reduce((sum, r) => sum + r.bars, 0)
        const ms = reports.reduce((sum, r) => sum + r.fetched.reduce((part, f) => part + f.klines_ms, 0), 0)
        const cpuMs = reports.reduce((sum, r) => sum + r.fetched.reduce((part, f) => part + f.klines_cpu_ms, 0), 0)
        const result = {
          bars,
          ms,
          // Above 1 the prefill keeps more than one core busy; near 2 it is bound by this machine's two cores.
          cores_busy: Math.round((cpuMs / ms) * 100) / 100,
          // The replay process serving the files (and making them on the first pass) over the whole prefill, funding included: CPU the prefill did not get.
          replay_cpu_ms: replayCpuMs,
          bars_per_s: Math.round((bars / ms) * 1000),
          fetched: reports.flatMap((r) => r.fetched),
          archive_files: after.archiveFiles - before.archiveFiles,
          rest_requests: after.requests - before.requests,
          refused_files: reports.reduce((sum, r) => sum + r.refused_files, 0),
        }
        log(`${label}: ${bars} bars in ${ms} ms (${result.bars_per_s} bars/s), ${result.archive_files} archive files, ${result.rest_requests} REST requests`)
        return result
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true })
      }
    }
    const replayMaking = await pass('replay making its files')
    const replayMade = await pass('replay files made')
    const failures: string[] = []
    if (replayMade.refused_files > 0 || replayMaking.refused_files > 0) failures.push('archive files were refused: the numbers include REST fallbacks')
    if (replayMade.bars !== replayMaking.bars) failures.push('the two prefills stored different numbers of bars')
    return {
      report: {
        suite: 'history',
        replay_making_files: replayMaking,
        replay_files_made: replayMade,
        goal: { bars_per_s: atLeast(replayMade.bars_per_s, GOAL_BARS_PER_S) },
        load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
        node: process.version,
      },
      failures,
    }
  } finally {
    replay.stop()
  }
}
