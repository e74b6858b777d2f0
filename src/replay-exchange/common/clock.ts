import { DAY } from './intervals.js'

/**
 * Maps wall-clock time onto recorded time: replayNow = replayStart + (now − startWall) × speed,
 * stopping at the end of the recording (past it there is nothing left to replay).
 */
export class ReplayClock {
  private readonly startWall: number

  constructor(
    readonly wallNow: () => number,
    readonly replayStart: number,
    readonly speed: number,
    private readonly end: number,
  ) {
    this.startWall = wallNow()
  }

  now(): number {
    return Math.min(this.end, Math.floor(this.replayStart + (this.wallNow() - this.startWall) * this.speed))
  }
}

export interface RecordingSpan {
  start: number
  end: number
}

/**
 * The span of the main recording: the per-symbol kline files that run to within 30 days of the
 * latest (so a short sample such as a month of DOGE minutes does not end it), from their names (the
 * end is the day after the last day, an upper bound; past the last bar prices hold at the last close).
 */
export function recordingSpan(files: { from: number; to: number }[]): RecordingSpan {
  if (files.length === 0) return { start: Number.NEGATIVE_INFINITY, end: Number.POSITIVE_INFINITY }
  const latest = Math.max(...files.map((k) => k.to))
  const main = files.filter((k) => k.to >= latest - 30 * DAY)
  return { start: Math.min(...main.map((k) => k.from)), end: Math.min(...main.map((k) => k.to)) }
}

/**
 * Default start: the moment of the premiumIndex snapshot (2025-06-17 08:38 UTC in data/), which lies
 * in the BTC and ETH one-minute recordings with 7 days of minutes ahead, and where every unrecorded
 * symbol's price is anchored to its real mark price. Without a snapshot: a week before the
 * recording ends (half the recording when it is shorter than two weeks).
 */
export function defaultReplayStart(snapshotTime: number | undefined, span: RecordingSpan): number {
  if (snapshotTime !== undefined && snapshotTime > span.start && snapshotTime < span.end) return snapshotTime
  return span.end - Math.min(7 * DAY, (span.end - span.start) / 2)
}
