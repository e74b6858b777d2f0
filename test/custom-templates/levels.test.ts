import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import type { ModuleDescription } from '../../src/custom-templates/sandbox/contract.js'
import { customTemplate } from '../../src/custom-templates/sandbox/custom-template.js'
import { RunSandboxes } from '../../src/custom-templates/sandbox/run-sandbox.js'
import { StrategyError } from '../../src/custom-templates/sandbox/strategy-error.js'
import { StrategyInstance } from '../../src/custom-templates/sandbox/strategy-instance.js'
import { type BacktestInput, type BacktestResult, type BarSeries, type ExitRules, feeRates, runBacktest } from '../../src/engine/index.js'
import { aggregate, barsFromRows, LOOSE_RULES, MINUTE, randomWalk } from '../engine/helpers.js'

/*
 * Protective levels a module states (issue 30): `{ target, stop_price?, take_profit_price? }` from onBar and
 * per symbol from onStep, through the sandbox into the engine (CustomSignal's levels), as an engine thread
 * runs a custom job and as a run's sandbox thread feeds a dry run.
 */
const HOUR = 3_600_000
const START = Date.UTC(2024, 0, 1)
const FLAT = [100, 100, 100, 100] as const
const SMA_PORT = readFileSync(new URL('../../examples/strategies/sma-cross.js', import.meta.url), 'utf8')

const hours = (rows: readonly (readonly number[])[], symbol = 'BTCUSDT') => barsFromRows(symbol, START, HOUR, rows)

function describeModule(multiSymbol = false, warmup = 0, params: ModuleDescription['paramsSchema']['properties'] = {}): ModuleDescription {
  const defaults = Object.fromEntries(Object.entries(params).map(([name, p]) => [name, p.default]))
  return { paramsSchema: { type: 'object', properties: params, additionalProperties: false }, defaults, multiSymbol, warmup, hasValidate: false }
}

/** A module answering `answers[k]` (JavaScript source) at its k-th bar, NaN after them. */
function scripted(answers: readonly string[], warmup = 0): string {
  return `export function warmup() { return ${warmup} }
export function create() {
  let k = 0
  const answers = [${answers.map((a) => `() => (${a})`).join(', ')}]
  return { onBar(bar) { const answer = answers[k++]; return answer === undefined ? NaN : answer() } }
}`
}

/** A backtest of `code` in a fresh sandbox instance, as an engine thread runs a custom job. */
async function backtest(code: string, description: ModuleDescription, input: Partial<BacktestInput> & { bars: BarSeries[] }): Promise<BacktestResult> {
  const instance = await StrategyInstance.load(code, 1)
  try {
    const template = customTemplate({ id: 'tpl-000000000000levels', version: 1, description, timeframe: '1h' }, instance)
    return runBacktest({
      templateId: template.id,
      template,
      params: description.defaults,
      rules: input.bars.map(() => LOOSE_RULES),
      capital: 1_000,
      leverage: 1,
      fees: feeRates('none'),
      start: input.bars[0]!.openTime[0]!,
      end: input.bars[0]!.openTime[input.bars[0]!.openTime.length - 1]!,
      ...input,
    })
  } finally {
    instance.dispose()
  }
}

describe('levels a module states, in a backtest', () => {
  it('moves a stop to breakeven: stated with the entry, moved at a close, in force from the next bar', async () => {
    const bars = hours([FLAT, [100, 101, 96, 100.5], [100.5, 101, 98.5, 99], FLAT])
    // Stop 95 with the entry (filled at bar 1's open, 100); bar 1's low 96 holds; moved to 99 at its close; bar 2's low 98.5 crosses it.
    const result = await backtest(scripted(['{ target: 1, stop_price: 95 }', '{ target: NaN, stop_price: 99 }']), describeModule(), { bars: [bars] })
    assert.equal(result.trades.length, 1)
    const [trade] = result.trades
    assert.deepEqual([trade!.entryPrice, trade!.exitPrice, trade!.exitTime, trade!.exitReason], [100, 99, START + 3 * HOUR - 1, 'stop_loss'])
    assert.deepEqual(result.metrics.exitReasons, { signal: 0, liquidation: 0, adl: 0, stop_loss: 1, take_profit: 0, trailing_stop: 0 })
    assert.deepEqual(result.exitResolution, { BTCUSDT: { '1h': 2 } })
  })

  it('null removes a level, an absent key keeps it, and a number alone keeps both', async () => {
    const bars = hours([FLAT, [100, 100.5, 97.5, 100], [100, 100.5, 96, 99], [99, 99.5, 94, 95], FLAT])
    const run = (answers: string[]) => backtest(scripted(answers), describeModule(), { bars: [bars] })
    // Stop 97 from the entry: bar 2's low 96 crosses it.
    const kept = await run(['{ target: 1, stop_price: 97 }', '{ target: NaN }', 'NaN'])
    assert.deepEqual([kept.trades[0]!.exitPrice, kept.trades[0]!.exitReason], [97, 'stop_loss'])
    // Removed at bar 1's close: nothing protects the long, it is still open at the end.
    const removed = await run(['{ target: 1, stop_price: 97 }', '{ target: NaN, stop_price: null }'])
    assert.equal(removed.trades.length, 0)
    assert.equal(removed.openPositions.length, 1)
    // A take profit stated later keeps the stop: bar 3 opens at 99 and its low 94 crosses the stop, not the 120 target.
    const both = await run(['{ target: 1, stop_price: 95.5 }', '{ target: NaN, take_profit_price: 120 }'])
    assert.deepEqual([both.trades[0]!.exitPrice, both.trades[0]!.exitTime, both.trades[0]!.exitReason], [95.5, START + 4 * HOUR - 1, 'stop_loss'])
  })

  it('drops the levels of warm-up bars with their targets', async () => {
    const bars = hours([FLAT, [100, 100.5, 99.5, 100], [100, 100.5, 96, 99], [99, 99.5, 98, 99], FLAT])
    // Warm-up 2: bar 0's stop 97 is dropped with its target; bar 2 enters (filled at bar 3's open) with no stop, so 96 passes unnoticed.
    const result = await backtest(scripted(['{ target: 1, stop_price: 97 }', 'NaN', '{ target: 1 }'], 2), describeModule(false, 2), { bars: [bars] })
    assert.equal(result.trades.length, 0)
    assert.equal(result.openPositions[0]?.entryTime, START + 3 * HOUR)
    assert.ok(!('exitReasons' in result.metrics), 'nothing stated after the warm-up: the plain result')
  })

  it('a many-symbol module states levels per symbol', async () => {
    const btc = hours([FLAT, [100, 100.5, 99.5, 100], [100, 100.5, 96, 99], FLAT], 'BTCUSDT')
    const eth = hours([FLAT, [100, 100.5, 99.5, 100], [100, 100.5, 96, 99], FLAT], 'ETHUSDT')
    const code = `export const multi_symbol = true
export function create() {
  let k = 0
  return { onStep() { return k++ === 0 ? { BTCUSDT: { target: 0.5, stop_price: 97 }, ETHUSDT: 0.5 } : undefined } }
}`
    const result = await backtest(code, describeModule(true), { bars: [btc, eth] })
    assert.deepEqual(
      result.trades.map((t) => [t.symbol, t.exitPrice, t.exitReason]),
      [['BTCUSDT', 97, 'stop_loss']],
    )
    assert.deepEqual(result.openPositions.map((p) => p.symbol), ['ETHUSDT'])
  })

  it('fails the run with STRATEGY_INVALID_OUTPUT naming the key and the bar, before any later bar', async () => {
    const bars = hours([FLAT, FLAT, FLAT, FLAT])
    for (const [answer, shown] of [['Infinity', 'Infinity'], ['-5', '-5'], ['"95"', 'string']]) {
      await assert.rejects(backtest(scripted(['{ target: 1, stop_price: 95 }', 'NaN', `{ target: NaN, stop_price: ${answer} }`]), describeModule(), { bars: [bars] }), (error: unknown) => {
        assert.ok(error instanceof StrategyError, String(error))
        assert.equal(error.code, 'STRATEGY_INVALID_OUTPUT')
        const at = START + 2 * HOUR
        assert.equal(
          error.message,
          `onBar returned stop_price ${shown} for the bar at ${at}; a price is a finite number > 0, null to remove the level, or absent to keep it (bar ${new Date(at).toISOString()})`,
        )
        return true
      })
    }
  })
})

describe('a module with stop_price and take_profit_price equals the built-in with the same fixed exits', () => {
  // Where they coincide: each strategy bar opens at the previous close (a 1m walk without gaps, in hours), so the
  // module's level from its signal's close is the config's from the entry fill, rounded the same way (to the tick away).
  const STOP = 0.02
  const TAKE = 0.03
  const port = SMA_PORT.replace(
    '      return target\n',
    `      if (target === 1) return { target, stop_price: bar.close * (1 - ${STOP}), take_profit_price: bar.close * (1 + ${TAKE}) }
      if (target === -1) return { target, stop_price: bar.close * (1 + ${STOP}), take_profit_price: bar.close * (1 - ${TAKE}) }
      return target
`,
  )
  const params = { fast: 5, slow: 20, allow_short: true }
  const description = describeModule(false, 20, {
    fast: { type: 'integer', default: 5, minimum: 2, maximum: 999 },
    slow: { type: 'integer', default: 20, minimum: 3, maximum: 1000 },
    allow_short: { type: 'boolean', default: true },
  })

  it('sma_cross on hours resolved on 1m bars: the same trades, exits, resolution and curve', async () => {
    assert.notEqual(port, SMA_PORT, 'the port was changed to state levels')
    const minutes = randomWalk('BTCUSDT', 30, 60 * 24 * 60, START, MINUTE, 30_000, 0.002, Number.POSITIVE_INFINITY)
    const bars = aggregate(minutes, HOUR)
    for (let i = 1; i < bars.openTime.length; i++) assert.equal(bars.open[i], bars.close[i - 1], 'every hour opens at the previous close')
    const common = {
      bars: [bars],
      detail: [{ bars: [minutes] }],
      rules: [LOOSE_RULES],
      capital: 10_000,
      leverage: 2,
      fees: feeRates('fixed_bps', 5),
      start: START,
      end: bars.openTime[bars.openTime.length - 1]!,
      params,
    }
    const exits: ExitRules = { stopLoss: STOP, takeProfit: TAKE, trigger: 'last' }
    const builtin = runBacktest({ ...common, templateId: 'sma_cross', exits })
    const custom = await backtest(port, description, common)
    const reasons = builtin.metrics.exitReasons!
    assert.ok(reasons.stop_loss >= 5 && reasons.take_profit >= 5 && reasons.signal >= 5, `a range with every kind of exit: ${JSON.stringify(reasons)}`)
    assert.deepEqual(custom.trades, builtin.trades)
    assert.deepEqual(custom.metrics, builtin.metrics)
    assert.deepEqual(custom.equityCurve, builtin.equityCurve)
    assert.deepEqual(custom.openPositions, builtin.openPositions)
    assert.deepEqual(custom.exitResolution, builtin.exitResolution)
    assert.deepEqual(custom.ambiguousExits, builtin.ambiguousExits)
    assert.equal(custom.finalEquity, builtin.finalEquity)
  })
})

describe("a run's sandbox passes levels on", () => {
  const bar = (k: number, close: number) => ({ openTime: START + k * HOUR, open: close, high: close, low: close, close, volume: 1 })
  const rules = [LOOSE_RULES, LOOSE_RULES]

  it('one symbol: the broker reads each bar’s levels from the signal as it asks for its target', async () => {
    const code = scripted(['{ target: 1, stop_price: 95 }', '0.5', '{ target: NaN, stop_price: null, take_profit_price: 120 }'])
    const version = { id: 'tpl-000000000000levels', version: 1, name: 'levels', compiled: { code, sha256: '0'.repeat(64) }, description: describeModule() }
    const sandbox = await new RunSandboxes(1).start({ version, seed: 1, params: {}, symbols: ['BTCUSDT'], timeframe: '1h', intervalMs: HOUR, rules })
    try {
      await sandbox.feed([bar(0, 100), bar(1, 101)], [])
      await sandbox.feed([bar(2, 102)], [])
      assert.equal(sandbox.template.multiSymbol, false)
      const signal = sandbox.template.multiSymbol ? assert.fail() : sandbox.template.create({ bars: [], funding: [], rules }, {})
      const seen = [0, 1, 2].map((i) => {
        signal.levels!.fill(Number.NaN)
        return [signal.onBar(i), ...signal.levels!]
      })
      assert.deepEqual(seen, [
        [1, 95, Number.NaN],
        [0.5, Number.NaN, Number.NaN],
        [Number.NaN, 0, 120],
      ])
    } finally {
      await sandbox.close()
    }
  })

  it('many symbols: per step, each symbol’s levels', async () => {
    const code = `export const multi_symbol = true
export function create() {
  let k = 0
  return { onStep() { return k++ === 0 ? { ETHUSDT: { target: -0.5, stop_price: 110 } } : { BTCUSDT: 0.5 } } }
}`
    const version = { id: 'tpl-000000000000levels', version: 1, name: 'levels', compiled: { code, sha256: '0'.repeat(64) }, description: describeModule(true) }
    const sandbox = await new RunSandboxes(1).start({ version, seed: 1, params: {}, symbols: ['BTCUSDT', 'ETHUSDT'], timeframe: '1h', intervalMs: HOUR, rules })
    try {
      await sandbox.feedSteps([0, 1].map((k) => ({ openTime: START + k * HOUR, bars: [bar(k, 100), bar(k, 100)] })), [[], []])
      const signal = sandbox.template.multiSymbol ? sandbox.template.create({ bars: [], funding: [], rules }, {}) : assert.fail()
      const targets = new Float64Array(2)
      const seen = [0, 1].map(() => {
        targets.fill(Number.NaN)
        signal.levels!.fill(Number.NaN)
        signal.onStep(new Int32Array([0, 0]), targets)
        return [...targets, ...signal.levels!]
      })
      assert.deepEqual(seen, [
        [Number.NaN, -0.5, Number.NaN, Number.NaN, 110, Number.NaN],
        [0.5, Number.NaN, Number.NaN, Number.NaN, Number.NaN, Number.NaN],
      ])
    } finally {
      await sandbox.close()
    }
  })
})
