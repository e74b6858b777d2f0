import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decimal, money, onStep, price, quantity } from '../../src/http/decimals.js'

describe('decimal strings', () => {
  it('money: the float noise seen in runs is rounded to 8 places, trailing zeros and -0 dropped, never an exponent', () => {
    assert.equal(money(-3.6744833999999185), '-3.6744834')
    assert.equal(money(2334.2199999999993), '2334.22')
    assert.equal(money(1.9245761999999997), '1.9245762')
    assert.equal(money(-1e-12), '0')
    assert.equal(money(1e-7), '0.0000001')
    assert.equal(money(123456789012.5), '123456789012.5')
    assert.equal(decimal(1 / 3), '0.33333333')
    assert.throws(() => money(Number.NaN), /not a finite number/)
  })

  it('prices at the tick and quantities at the step, exact multiples whatever the float error', () => {
    const rules = { tickSize: 0.1, stepSize: 0.001 }
    assert.equal(price(106519.20000000001, rules), '106519.2')
    assert.equal(price(106519.1 + 0.1, rules), '106519.2')
    assert.equal(price(106519.24, rules), '106519.2', 'an average of fills lands on the nearest tick')
    assert.equal(quantity(0.30000000000000004, rules), '0.3')
    assert.equal(quantity(-0.018, rules), '-0.018')
    assert.equal(quantity(0, rules), '0')
    assert.equal(onStep(7.2, 0.5), '7')
    assert.equal(onStep(7.3, 0.5), '7.5')
    assert.equal(onStep(0.00012345, 0.00001), '0.00012')
    assert.equal(onStep(-0.0000001, 0.001), '0', 'no -0')
  })

  it('every string is a multiple of its step for many sums of steps (exact decimal arithmetic)', () => {
    for (const [step, places] of [[0.1, 1], [0.01, 2], [0.001, 3], [0.5, 1], [0.00001, 5]] as const) {
      let x = 0
      for (let k = 0; k < 2_000; k++) {
        x += step * 7 // accumulates float error as a ledger does
        const text = onStep(x, step)
        assert.match(text, new RegExp(`^[0-9]+(\\.[0-9]{1,${places}})?$`), `${text} for step ${step}`)
        const scaled = BigInt(text.replace('.', '').padEnd(text.split('.')[0]!.length + places, '0'))
        const unit = BigInt(Math.round(step * 10 ** places))
        assert.equal(scaled % unit, 0n, `${text} is a multiple of ${step}`)
        assert.equal(scaled / unit, BigInt(7 * (k + 1)), `${text} is ${7 * (k + 1)} steps`)
      }
    }
  })
})
