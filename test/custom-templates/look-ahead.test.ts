import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { runBacktest } from '../../src/engine/index.js'
import { customTemplate } from '../../src/custom-templates/sandbox/custom-template.js'
import { inspectModule } from '../../src/custom-templates/sandbox/inspect-module.js'
import { loadSmokeData } from '../../src/custom-templates/sandbox/smoke-bars.js'
import { StrategyInstance } from '../../src/custom-templates/sandbox/strategy-instance.js'
import type { BarSeries } from '../../src/engine/types.js'

const SMA_PORT = readFileSync(new URL('../../examples/strategies/sma-cross.js', import.meta.url), 'utf8')
const smoke = loadSmokeData()

/** The series cut to its first `count` bars. */
function prefix(series: BarSeries, count: number): BarSeries {
  const cut = (column: Float64Array) => column.slice(0, count)
  return { ...series, openTime: cut(series.openTime), open: cut(series.open), high: cut(series.high), low: cut(series.low), close: cut(series.close), volume: cut(series.volume) }
}

async function trades(bars: BarSeries) {
  const description = await inspectModule(SMA_PORT, smoke)
  const instance = await StrategyInstance.load(SMA_PORT, 1)
  const template = customTemplate({ id: 'port', version: 1, description, timeframe: '1h' }, instance)
  const result = runBacktest({
    templateId: 'port',
    template,
    params: { fast: 5, slow: 20, allow_short: true },
    bars: [bars],
    rules: [smoke.rules[0]!],
    capital: 10_000,
    leverage: 1,
    fees: { makerRate: 0.0002, takerRate: 0.0005 },
    start: bars.openTime[0]!,
    end: bars.openTime[bars.openTime.length - 1]!,
  })
  instance.dispose()
  return result.trades
}

describe('no look-ahead through the batches', () => {
  it('a run cut at any bar makes exactly the trades the whole run closed before that bar', async () => {
    const whole = smoke.bars[0]!
    const all = await trades(whole)
    assert.ok(all.length > 20, 'the full run trades')
    // Cuts inside and at the edges of the 4,096-bar batches would expose a module that saw bars past its own.
    for (const count of [137, 1_000, 1_999]) {
      const cut = prefix(whole, count)
      const last = cut.openTime[count - 1]!
      const closedBefore = all.filter((trade) => trade.exitTime < last)
      const seen = (await trades(cut)).filter((trade) => trade.exitTime < last)
      assert.deepEqual(seen, closedBefore, `cut at ${count} bars`)
    }
  })
})
