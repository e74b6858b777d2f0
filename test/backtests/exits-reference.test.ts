import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { engineInput } from '../../src/backtests/engine-input.js'
import type { JobConfig } from '../../src/backtests/schemas.js'
import { type BarSeries, runBacktest, type Trade } from '../../src/engine/index.js'
import { exitRulesOf } from '../../src/strategies/exits.js'
import { historyCaches } from '../../src/work/history-cache.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'

const HOUR = 3_600_000
const EXITS = { stop_loss: '0.02', take_profit: '0.03', trailing_stop: '0.012', trailing_activation: '0.015', trigger: 'last' as const }
const JOB: JobConfig = {
  template_id: 'sma_cross',
  params: { fast: 10, slow: 30, allow_short: true },
  symbols: ['BTCUSDT'],
  timeframe: '1h',
  start: '2025-05-05T00:00:00Z',
  end: '2025-06-16T23:00:00Z',
  capital: '10000',
  leverage: 1,
  fee_model: 'fixed_bps',
  exits: EXITS,
}

interface Exit {
  time: number
  price: number
  reason: string
}

/**
 * The reference: a deliberately plain replay of one position's protective exits, written from the
 * semantics text and not from the engine. Levels from the entry price, rounded to the tick on the
 * cautious side. Per strategy bar after the entry's: its open checked first. Then the bars examined
 * inside it (the finest detail series holding all of them, else the strategy bar itself), one by one:
 * the open (a level already crossed fills there), then the range (stop side first: a level inside
 * [low, high] fills at the level), then the trailing extreme raised from the high (low for a short),
 * activation likewise. Stops at `until`, the open at which the engine's signal closed the trade (its
 * open still checked first), or at the end of the bars.
 */
function referenceExit(trade: Pick<Trade, 'side' | 'entryTime' | 'entryPrice'>, strategy: BarSeries, detail: readonly BarSeries[], tick: number, until: number): Exit | undefined {
  const long = trade.side === 'buy'
  const entry = trade.entryPrice
  const decimals = String(tick).split('.')[1]?.length ?? 0
  const down = (x: number) => Number((Math.floor(x / tick + 1e-9) * tick).toFixed(decimals))
  const up = (x: number) => Number((Math.ceil(x / tick - 1e-9) * tick).toFixed(decimals))
  const stop = long ? down(entry * (1 - Number(EXITS.stop_loss))) : up(entry * (1 + Number(EXITS.stop_loss)))
  const take = long ? up(entry * (1 + Number(EXITS.take_profit))) : down(entry * (1 - Number(EXITS.take_profit)))
  const activation = long ? up(entry * (1 + Number(EXITS.trailing_activation))) : down(entry * (1 - Number(EXITS.trailing_activation)))
  const callback = Number(EXITS.trailing_stop)
  let best: number | undefined
  const trail = () => (best === undefined ? undefined : long ? down(best * (1 - callback)) : up(best * (1 + callback)))
  // The stop-side level a price crosses first (the one nearer the open), and its reason.
  const stopSide = (): [number, string] => {
    const t = trail()
    if (t === undefined) return [stop, 'stop_loss']
    return long ? (stop >= t ? [stop, 'stop_loss'] : [t, 'trailing_stop']) : stop <= t ? [stop, 'stop_loss'] : [t, 'trailing_stop']
  }
  const against = (price: number, level: number) => (long ? price <= level : price >= level)
  const beyond = (price: number, level: number) => (long ? price >= level : price <= level)
  const openCheck = (open: number, time: number): Exit | undefined => {
    const [level, reason] = stopSide()
    if (against(open, level)) return { time, price: open, reason }
    if (beyond(open, take)) return { time, price: open, reason: 'take_profit' }
    return undefined
  }

  for (let i = 0; i < strategy.openTime.length; i++) {
    const t = strategy.openTime[i]!
    if (t < trade.entryTime) continue
    if (t > trade.entryTime) {
      const atOpen = openCheck(strategy.open[i]!, t)
      if (atOpen) return atOpen
    }
    if (t >= until) return undefined
    for (const bar of examined(strategy, i, detail)) {
      const atOpen = openCheck(bar.open, bar.time)
      if (atOpen) return atOpen
      const [level, reason] = stopSide()
      const extreme = long ? bar.low : bar.high
      if (against(extreme, level)) return { time: bar.time + bar.length - 1, price: level, reason }
      if (beyond(long ? bar.high : bar.low, take)) return { time: bar.time + bar.length - 1, price: take, reason: 'take_profit' }
      const favourable = long ? bar.high : bar.low
      if (best === undefined ? beyond(favourable, activation) : beyond(favourable, best)) best = favourable
    }
  }
  return undefined
}

/** The bars inside strategy bar i: the finest detail series with every one of them, else the strategy bar. */
function examined(strategy: BarSeries, i: number, detail: readonly BarSeries[]) {
  const t = strategy.openTime[i]!
  const interval = strategy.intervalMs
  for (const series of [...detail].sort((a, b) => a.intervalMs - b.intervalMs)) {
    const bars = []
    for (let time = t; time < t + interval; time += series.intervalMs) {
      const j = indexOf(series).get(time)
      if (j === undefined) break
      bars.push({ time, length: series.intervalMs, open: series.open[j]!, high: series.high[j]!, low: series.low[j]! })
    }
    if (bars.length === interval / series.intervalMs) return bars
  }
  return [{ time: t, length: interval, open: strategy.open[i]!, high: strategy.high[i]!, low: strategy.low[i]! }]
}

const indexes = new WeakMap<BarSeries, Map<number, number>>()
/** Each bar's index by its open time. */
function indexOf(series: BarSeries): Map<number, number> {
  let index = indexes.get(series)
  if (!index) {
    index = new Map(Array.from(series.openTime, (time, j) => [time, j]))
    indexes.set(series, index)
  }
  return index
}

for (const backend of backends()) {
  describe(`protective exits against a plain reference, on the replay's history (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true })
    })
    after(() => t.close())

    const cases = [
      { name: "the 1m range, resolved on 1m", config: JOB, resolution: '1m' },
      { name: '2024, resolved on 5m', config: { ...JOB, start: '2024-01-01T00:00:00Z', end: '2024-12-31T23:00:00Z' }, resolution: '5m' },
    ]
    for (const { name, config, resolution } of cases) {
      it(`gives every exit over ${name} as the reference does`, async () => {
        const deps = { db: t.database.handle.db, market: t.services.market, log: pino({ level: 'silent' }) }
        const input = await engineInput(deps, historyCaches(64), config, 'reference', () => false, () => undefined)
        const result = runBacktest({ ...input, exits: exitRulesOf(config.exits!) })
        assert.deepEqual(Object.keys(result.exitResolution!.BTCUSDT!), [resolution], JSON.stringify(result.exitResolution))

        const strategy = input.bars[0]!
        const detail = input.detail![0]!.bars!
        const tick = input.rules[0]!.tickSize
        // The engine's entries are the reference's only input from the engine: a protective exit must be the
        // reference's first exit after its entry; a signal exit must come before the reference's first.
        const reasons: Record<string, number> = {}
        for (const trade of result.trades) {
          reasons[trade.exitReason] = (reasons[trade.exitReason] ?? 0) + 1
          const protective = ['stop_loss', 'take_profit', 'trailing_stop'].includes(trade.exitReason)
          const expected = referenceExit(trade, strategy, detail, tick, protective ? Number.POSITIVE_INFINITY : trade.exitTime)
          const label = `trade ${trade.id} (${trade.side} at ${new Date(trade.entryTime).toISOString()})`
          if (!protective) {
            assert.equal(expected, undefined, `${label}: the engine closed it by ${trade.exitReason} at ${new Date(trade.exitTime).toISOString()}, the reference exits before`)
            continue
          }
          assert.ok(expected, `${label}: the engine exits by ${trade.exitReason}, the reference never`)
          assert.equal(trade.exitReason, expected.reason, label)
          assert.equal(trade.exitTime, expected.time, `${label}: exit time`)
          assert.ok(Math.abs(trade.exitPrice - expected.price) <= 1e-9 * expected.price, `${label}: exit price ${trade.exitPrice}, the reference ${expected.price}`)
        }
        for (const open of result.openPositions) {
          assert.equal(referenceExit(open, strategy, detail, tick, Number.POSITIVE_INFINITY), undefined, 'the position still open at the end has no exit in the reference')
        }
        // Every kind of exit happened: the comparison covered each.
        for (const reason of ['signal', 'stop_loss', 'take_profit', 'trailing_stop']) assert.ok((reasons[reason] ?? 0) > 0, `no ${reason} exit: ${JSON.stringify(reasons)}`)
        assert.deepEqual(result.metrics.exitReasons, { signal: 0, liquidation: 0, adl: 0, stop_loss: 0, take_profit: 0, trailing_stop: 0, ...reasons })
      })
    }
  })
}
