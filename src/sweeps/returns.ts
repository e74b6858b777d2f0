import type { Db } from '../db/connect.js'
import { invalidParameter } from '../http/errors.js'
import { isoTime } from '../backtests/result-format.js'
import { dailyReturns } from './statistics/index.js'
import { runEquities } from './queries.js'

/** A run's public id: r1 … rN in configuration order. */
export const runId = (runNo: number): string => `r${runNo}`

/**
 * The run numbers a `run_ids` query names (r12,r3 → [12, 3]): each a run id, once, at most `max`;
 * anything else is refused naming run_ids. Checked before the sweep is looked up (bad input is a 400
 * whether or not the sweep exists); runsOfSweep then checks them against the sweep's size.
 */
export function parseRunIds(text: string, max: number): number[] {
  const ids = text.split(',').map((id) => id.trim())
  if (ids.length > max) throw invalidParameter('run_ids', `run_ids names ${ids.length} runs; at most ${max} a request`)
  const runNos: number[] = []
  for (const id of ids) {
    const match = /^r([1-9][0-9]{0,5})$/.exec(id)
    if (!match) throw invalidParameter('run_ids', `run_ids: ${JSON.stringify(id.slice(0, 20))} is not a run id (r1, r2, …)`)
    const runNo = Number(match[1])
    if (runNos.includes(runNo)) throw invalidParameter('run_ids', `run_ids names ${id} twice`)
    runNos.push(runNo)
  }
  return runNos
}

/** The run numbers of parseRunIds, each a run of a sweep of `configurations`. */
export function runsOfSweep(runNos: number[], configurations: number): number[] {
  const outside = runNos.find((runNo) => runNo > configurations)
  if (outside !== undefined) throw invalidParameter('run_ids', `run_ids: "${runId(outside)}" is not a run of this sweep (r1 … r${configurations})`)
  return runNos
}

/** Float64 values as stored: little-endian bytes. */
export function encodeFloats(values: Float64Array): Buffer {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength)
}

export function decodeFloats(bytes: Uint8Array): Float64Array {
  // Copied: a Buffer from the driver may sit at an offset that is no multiple of 8.
  const copy = new Uint8Array(bytes.byteLength)
  copy.set(bytes)
  return new Float64Array(copy.buffer)
}

/** The T × N matrix the statistics are computed from: N columns of T daily returns, and the days they end on. */
export interface ReturnsMatrix {
  runNos: number[]
  /** Epoch ms of the equity point each return ends on, length T. */
  days: number[]
  /** One column per run, in run order. */
  columns: Float64Array[]
  objectives: (number | null)[]
  params: Record<string, unknown>[]
  metrics: Record<string, unknown>[]
}

/** Every stored run's daily returns (or only `runNos`', in that order), from its daily equity (r_t = E_t/E_{t−1} − 1). */
export async function returnsMatrix(db: Db, sweepId: string, runNos?: readonly number[]): Promise<ReturnsMatrix> {
  const equities = await runEquities(db, sweepId, runNos)
  const days = equities.days
  const order = runNos && new Map(runNos.map((runNo, i) => [runNo, i]))
  const runs = order ? equities.runs.sort((a, b) => order.get(a.run_no)! - order.get(b.run_no)!) : equities.runs
  const points = days ? Array.from(decodeFloats(days)) : []
  const columns = runs.map((run) => {
    const equity = decodeFloats(run.equity)
    if (equity.length !== points.length) throw new Error(`run ${run.run_no} has ${equity.length} daily points where the sweep has ${points.length}`)
    return dailyReturns(equity)
  })
  return {
    runNos: runs.map((run) => run.run_no),
    days: points.slice(1),
    columns,
    objectives: runs.map((run) => run.objective),
    params: runs.map((run) => run.params),
    metrics: runs.map((run) => run.metrics),
  }
}

/** CSV: `date` then one column per run id; numbers as JavaScript writes them (shortest exact form). */
export function returnsCsv(matrix: ReturnsMatrix): string {
  const lines = [['date', ...matrix.runNos.map(runId)].join(',')]
  for (let t = 0; t < matrix.days.length; t++) {
    const row = [isoTime(matrix.days[t]!)]
    for (const column of matrix.columns) row.push(String(column[t]))
    lines.push(row.join(','))
  }
  return `${lines.join('\n')}\n`
}

/** JSON {run_ids, dates, returns: T rows of N}, written by hand: the matrix can hold millions of numbers. */
export function returnsJson(matrix: ReturnsMatrix): string {
  const rows: string[] = []
  for (let t = 0; t < matrix.days.length; t++) {
    const row: string[] = []
    for (const column of matrix.columns) row.push(JSON.stringify(column[t]))
    rows.push(`[${row.join(',')}]`)
  }
  const ids = JSON.stringify(matrix.runNos.map(runId))
  const dates = JSON.stringify(matrix.days.map(isoTime))
  return `{"run_ids":${ids},"dates":${dates},"returns":[${rows.join(',')}]}`
}
