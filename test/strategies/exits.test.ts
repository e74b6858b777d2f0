import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { exitRulesOf, exitsProblem, resolvedExits, slippageProblem } from '../../src/strategies/exits.js'

describe('exits: the one definition of protective exits on the API', () => {
  it('accepts fractions within bounds and turns them into the engine rules', () => {
    const exits = { stop_loss: '0.02', take_profit: '0.05', trailing_stop: '0.01', trailing_activation: '0.03' }
    assert.equal(exitsProblem(exits), undefined)
    assert.deepEqual(resolvedExits(exits), { ...exits, trigger: 'last' })
    assert.deepEqual(exitRulesOf({ ...exits, trigger: 'mark' }), { stopLoss: 0.02, takeProfit: 0.05, trailingStop: 0.01, trailingActivation: 0.03, trigger: 'mark' })
    assert.deepEqual(exitRulesOf({ stop_loss: '0.1' }), { stopLoss: 0.1, trigger: 'last' })
  })

  it('names the field at fault', () => {
    const field = (exits: Parameters<typeof exitsProblem>[0]) => exitsProblem(exits)?.field
    assert.equal(field({}), 'exits')
    assert.equal(field({ trigger: 'mark' }), 'exits')
    assert.equal(field({ stop_loss: '0' }), 'exits.stop_loss')
    assert.equal(field({ stop_loss: '1' }), 'exits.stop_loss')
    assert.equal(field({ stop_loss: '-0.1' }), 'exits.stop_loss')
    assert.equal(field({ stop_loss: '1e-2' }), 'exits.stop_loss')
    assert.equal(field({ take_profit: 'abc' }), 'exits.take_profit')
    assert.equal(field({ trailing_stop: '0.0005' }), 'exits.trailing_stop', "below Binance's 0.1 %")
    assert.equal(field({ trailing_stop: '0.21' }), 'exits.trailing_stop', "above Binance's 20 %")
    assert.equal(field({ trailing_activation: '0.02' }), 'exits.trailing_activation')
    assert.equal(field({ stop_loss: '0.02', trailing_activation: '0.02' }), 'exits.trailing_activation')
    assert.match(exitsProblem({ stop_loss: '2' })!.message, /exits\.stop_loss must be a decimal string from 0\.0001 to 0\.99/)
  })

  it('bounds slippage_bps to 0..1000', () => {
    assert.equal(slippageProblem('0'), undefined)
    assert.equal(slippageProblem('2.5'), undefined)
    assert.equal(slippageProblem('1000'), undefined)
    assert.equal(slippageProblem('1000.5')?.field, 'slippage_bps')
    assert.equal(slippageProblem('-1')?.field, 'slippage_bps')
    assert.equal(slippageProblem('x')?.field, 'slippage_bps')
  })
})
