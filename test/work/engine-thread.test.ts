import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { EngineFailure, EnginePool } from '../../src/work/engine-pool.js'
import { smaInput } from './sma-input.js'

const input = smaInput(60)

describe('the engine thread', () => {
  const pool = new EnginePool(1)
  after(() => pool.close())

  it("passes a job's exits and slippage to the engine", async () => {
    const plain = await pool.run(input, () => undefined).result
    const guarded = await pool.run({ ...input, exits: { stopLoss: 0.01, trigger: 'last' }, slippageBps: 10 }, () => undefined).result
    assert.equal(plain.metrics.exitReasons, undefined)
    assert.ok(guarded.metrics.exitReasons, 'a run with exits counts its exit reasons')
    assert.ok(guarded.exitResolution?.BTCUSDT)
    assert.ok(guarded.trades[0]!.entryPrice > plain.trades[0]!.entryPrice, 'slipped')
  })

  it('fails a mark-triggered run without mark-price bars as NO_DATA naming the symbol', async () => {
    const run = pool.run({ ...input, exits: { stopLoss: 0.01, trigger: 'mark' } }, () => undefined)
    await assert.rejects(run.result, (error: unknown) => error instanceof EngineFailure && error.code === 'NO_DATA' && /BTCUSDT/.test(error.message))
  })
})
