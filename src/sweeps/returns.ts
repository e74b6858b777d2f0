import type { Db } from '../db/connect.js'
import { cursorJson, encodeCursorJson, isStorableInteger, notACursor } from '../http/cursor.js'
import { invalidParameter } from '../http/errors.js'
import { isoTime } from '../backtests/result-format.js'
import { dailyReturns } from './statistics/index.js'
import { runEquities, sweepDays } from './queries.js'
import { MAX_RETURN_COLUMNS, RETURN_PAGE_COLUMNS, type ReturnsQuery } from './schemas.js'

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

/** The columns a GET …/returns asks of a done sweep of `configurations` runs, and the cursor of the page after them. */
export function askedColumns(query: ReturnsQuery, configurations: number): { columns: ReturnColumns; next: string | null } {
  if (query.run_ids !== undefined) {
    if (query.limit !== undefined || query.cursor !== undefined) {
      throw invalidParameter(query.cursor !== undefined ? 'cursor' : 'limit', 'run_ids names its columns; limit and cursor page through every column: ask one or the other')
    }
    return { columns: { runNos: runsOfSweep(parseRunIds(query.run_ids, MAX_RETURN_COLUMNS), configurations) }, next: null }
  }
  if (query.limit === undefined && query.cursor === undefined && configurations > RETURN_PAGE_COLUMNS) {
    throw invalidParameter(
      'limit',
      `this sweep has ${configurations} runs; a request reads at most ${RETURN_PAGE_COLUMNS} columns: read them in pages with ?limit=${RETURN_PAGE_COLUMNS}, each answer's Link rel="next" header naming the next page (its cursor), or name up to ${MAX_RETURN_COLUMNS} with run_ids`,
    )
  }
  const first = query.cursor === undefined ? 1 : firstOfCursor(query.cursor, configurations)
  const last = Math.min(configurations, first + (query.limit ?? RETURN_PAGE_COLUMNS) - 1)
  return { columns: { first, last }, next: last < configurations ? encodeCursorJson(['columns', last + 1]) : null }
}

/**
 * The first run of the page a cursor of askedColumns names; 400 for anything else (a run number beyond the
 * sweep, 1e300). Without `configurations` (before the sweep is read) only the cursor's shape is checked.
 */
export function firstOfCursor(cursor: string, configurations = Number.POSITIVE_INFINITY): number {
  const value = cursorJson(cursor)
  if (Array.isArray(value) && value.length === 2 && value[0] === 'columns' && isStorableInteger(value[1], 2) && value[1] <= configurations) return value[1]
  throw notACursor(' for this sweep')
}

/** Cells per unit of weight of GET …/returns: a 1,000-column page of 5 years weighs 92 besides the lookup, the whole of a 10,000-run sweep 920. */
const CELLS_PER_WEIGHT = 20_000

/** The weight of sending a matrix of `rows` × `columns` numbers, in proportion to its size. */
export const returnsWeight = (rows: number, columns: ReturnColumns): number =>
  Math.ceil((rows * ('runNos' in columns ? columns.runNos.length : columns.last - columns.first + 1)) / CELLS_PER_WEIGHT)

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

/** The columns of a matrix: runs named (in that order), or runs first … last in run order. */
export type ReturnColumns = { runNos: readonly number[] } | { first: number; last: number }

const EVERY_RUN: ReturnColumns = { first: 1, last: 2_147_483_647 }

/**
 * Runs read per query. A run's 5 years of daily equity is 14.6 KB (29 KB as the wire's hex text): all
 * 10,000 runs of a sweep in one query held ~0.5 GB of text and Buffers at once and stalled the event loop
 * while the driver decoded them (issue 37); 100 runs are ~3 MB a query.
 */
const RUNS_PER_READ = 100

/** The epoch ms of a sweep's daily equity points (none before its first run is stored). */
export async function equityDays(db: Db, sweepId: string): Promise<number[]> {
  const days = await sweepDays(db, sweepId)
  return days ? Array.from(decodeFloats(days)) : []
}

/**
 * Every stored run's daily returns (or only those of `columns`), from its daily equity (r_t = E_t/E_{t−1} − 1),
 * read RUNS_PER_READ runs a query. `points`: the sweep's equityDays, when the caller has read them.
 */
export async function returnsMatrix(db: Db, sweepId: string, columns: ReturnColumns = EVERY_RUN, points?: number[]): Promise<ReturnsMatrix> {
  points ??= await equityDays(db, sweepId)
  const matrix: ReturnsMatrix = { runNos: [], days: points.slice(1), columns: [], objectives: [], params: [], metrics: [] }
  const add = (runs: Awaited<ReturnType<typeof runEquities>>) => {
    for (const run of runs) {
      const equity = decodeFloats(run.equity)
      if (equity.length !== points.length) throw new Error(`run ${run.run_no} has ${equity.length} daily points where the sweep has ${points.length}`)
      matrix.runNos.push(run.run_no)
      matrix.columns.push(dailyReturns(equity))
      matrix.objectives.push(run.objective)
      matrix.params.push(run.params)
      matrix.metrics.push(run.metrics)
    }
  }
  if ('runNos' in columns) {
    const order = new Map(columns.runNos.map((runNo, i) => [runNo, i]))
    for (let i = 0; i < columns.runNos.length; i += RUNS_PER_READ) add(await runEquities(db, sweepId, { runNos: columns.runNos.slice(i, i + RUNS_PER_READ) }))
    sortColumns(matrix, (a, b) => order.get(a)! - order.get(b)!)
    return matrix
  }
  for (let after = columns.first - 1; ; ) {
    const runs = await runEquities(db, sweepId, { after, last: columns.last, limit: RUNS_PER_READ })
    add(runs)
    if (runs.length < RUNS_PER_READ) return matrix
    after = runs[runs.length - 1]!.run_no
  }
}

/** Reorders a matrix's columns (and what comes with each) by their run numbers. */
function sortColumns(matrix: ReturnsMatrix, compare: (a: number, b: number) => number): void {
  const order = matrix.runNos.map((_, i) => i).sort((i, j) => compare(matrix.runNos[i]!, matrix.runNos[j]!))
  for (const key of ['runNos', 'columns', 'objectives', 'params', 'metrics'] as const) {
    const values = matrix[key] as unknown[]
    const sorted = order.map((i) => values[i])
    values.splice(0, values.length, ...sorted)
  }
}

/**
 * Characters of text per piece of an answer (whole rows; a row of 1,000 columns is ~21 KB): each piece
 * is one turn of the loop, and ten answers in flight take a turn each between two rounds of I/O. At
 * 32 KB a round took 60–90 ms on this loaded host, so pieces are a row of a wide page.
 */
const PIECE = 16 * 1024

/**
 * The matrix as the answer's text, a piece at a time, so an answer is written as the client reads it
 * (http/paced-stream.ts) instead of built whole: CSV is `date` then one column per run id, JSON
 * {run_ids, dates, returns: T rows of N} written by hand; numbers as JavaScript writes them (shortest
 * exact form). The bytes are those the whole-answer writer produced before issue 37.
 */
export function* returnsText(matrix: ReturnsMatrix, format: 'csv' | 'json'): Generator<string> {
  const csv = format === 'csv'
  let piece = csv
    ? `${['date', ...matrix.runNos.map(runId)].join(',')}\n`
    : `{"run_ids":${JSON.stringify(matrix.runNos.map(runId))},"dates":${JSON.stringify(matrix.days.map(isoTime))},"returns":[`
  // JSON.stringify's text of a number, without its cost: String's, and null where JSON has no number.
  const number = csv ? String : (x: number) => (Number.isFinite(x) ? String(x) : 'null')
  for (let t = 0; t < matrix.days.length; t++) {
    const row: string[] = csv ? [isoTime(matrix.days[t]!)] : []
    for (const column of matrix.columns) row.push(number(column[t]!))
    piece += csv ? `${row.join(',')}\n` : `${t === 0 ? '' : ','}[${row.join(',')}]`
    if (piece.length >= PIECE) {
      yield piece
      piece = ''
    }
  }
  yield csv ? piece : `${piece}]}`
}
