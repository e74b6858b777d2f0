import assert from 'node:assert/strict'
import type { Trade } from '../../src/engine/types.js'

const MINUTE = 60_000

/** The columns of a stored trade a live run is compared on. */
export interface StoredTrade {
  side: string
  entry_time: Date
  exit_time: Date
  entry_price: string
  exit_price: string
  qty: string
  /** Compared with the backtest's when given (a run with protective exits). */
  exit_reason?: string
}

/**
 * Asserts a live run's trades (of one symbol, in order) are a backtest's over the same bars: the same sides,
 * each entered at most `maxLagMs` after the backtest's, prices within `maxBps`, quantities within `maxQtyPct`.
 * The live run trails the backtest by up to that lag, so a backtest trade closing within it of the live run's
 * last exit may still be open live: compared trade for trade up to the live count, and no backtest trade that
 * closed well before the live run's last exit may be left out. With exit reasons (a run with protective exits),
 * each trade's reason is the backtest's too. Answers the worst deviation and lag, and the worst exit price gap by
 * exit reason.
 */
export function assertLiveTrades(
  what: string,
  stored: readonly StoredTrade[],
  expected: readonly Trade[],
  limits: { maxLagMs?: number; maxBps?: number; maxQtyPct?: number } = {},
): { worstBps: number; worstLag: number; worstExitBps: Record<string, number> } {
  const { maxLagMs = 4 * MINUTE, maxBps = 30, maxQtyPct = 1 } = limits
  const last = stored[stored.length - 1]?.exit_time.getTime() ?? Number.NEGATIVE_INFINITY
  const comparable = expected.slice(0, stored.length)
  assert.equal(comparable.length, stored.length, `${what}: the backtest made at least the live trades`)
  const next = expected[stored.length]
  assert.ok(!next || next.exitTime > last - maxLagMs, `${what}: the backtest's trade ${stored.length} closed at ${next?.exitTime}, before the live run's last exit ${last} less the allowed lag`)
  let worstBps = 0
  let worstLag = 0
  // The worst exit price gap by exit reason: a protective exit fills where the exchange triggered it.
  const worstExitBps: Record<string, number> = {}
  for (const [i, live] of stored.entries()) {
    const backtest = comparable[i]!
    assert.equal(live.side, backtest.side, `${what}: trade ${i}'s side`)
    // The order goes out when the closed kline arrives: the stream sends it within a wall second (a few replay
    // minutes at the tests' speeds), later on a loaded machine.
    const entryLag = live.entry_time.getTime() - backtest.entryTime
    worstLag = Math.max(worstLag, entryLag)
    assert.ok(entryLag >= 0 && entryLag < maxLagMs, `${what}: trade ${i} entered ${entryLag} ms after the backtest's`)
    for (const [a, b] of [
      [Number(live.entry_price), backtest.entryPrice],
      [Number(live.exit_price), backtest.exitPrice],
    ] as const) {
      worstBps = Math.max(worstBps, (Math.abs(a - b) / b) * 10_000)
    }
    assert.ok((Math.abs(Number(live.qty) - backtest.qty) / backtest.qty) * 100 < maxQtyPct, `${what}: trade ${i} qty ${live.qty} against ${backtest.qty}`)
    if (live.exit_reason !== undefined) {
      assert.equal(live.exit_reason, backtest.exitReason, `${what}: trade ${i}'s exit reason`)
      const gap = (Math.abs(Number(live.exit_price) - backtest.exitPrice) / backtest.exitPrice) * 10_000
      worstExitBps[live.exit_reason] = Math.max(worstExitBps[live.exit_reason] ?? 0, gap)
    }
  }
  assert.ok(worstBps < maxBps, `${what}: prices within ${maxBps} bps of the backtest's (worst ${worstBps.toFixed(2)})`)
  return { worstBps, worstLag, worstExitBps }
}
