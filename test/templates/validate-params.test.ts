import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AppError } from '../../src/http/errors.js'
import { TEMPLATES, defaultsOf, listTemplates } from '../../src/templates/registry.js'
import { validateParams, validateSymbols } from '../../src/templates/validate.js'

function refused(run: () => unknown, field: string, message: RegExp) {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof AppError, String(error))
    assert.equal(error.code, 'INVALID_PARAMETER')
    assert.equal(error.status, 400)
    assert.equal(error.field, field)
    assert.match(error.message, message)
    return true
  })
}

describe('validateParams', () => {
  it('applies defaults and keeps given values', () => {
    assert.deepEqual(validateParams('sma_cross', {}), { fast: 10, slow: 30, allow_short: false })
    assert.deepEqual(validateParams('sma_cross', undefined), { fast: 10, slow: 30, allow_short: false })
    assert.deepEqual(validateParams('sma_cross', { slow: 50, allow_short: true }), { fast: 10, slow: 50, allow_short: true })
    assert.deepEqual(validateParams('macd', {}), { fast: 12, slow: 26, signal: 9, allow_short: false })
    assert.deepEqual(validateParams('bollinger_breakout', { width: 2.5 }), { period: 20, width: 2.5, allow_short: false })
  })

  it('names the field and its bounds', () => {
    refused(() => validateParams('sma_cross', { fast: 1 }), 'params.fast', /^params\.fast must be an integer between 2 and 999$/)
    refused(() => validateParams('sma_cross', { fast: 2.5 }), 'params.fast', /an integer/)
    refused(() => validateParams('sma_cross', { slow: '30' }), 'params.slow', /an integer between 3 and 1000/)
    refused(() => validateParams('sma_cross', { slow: 1001 }), 'params.slow', /between 3 and 1000/)
    refused(() => validateParams('sma_cross', { allow_short: 1 }), 'params.allow_short', /must be true or false/)
    refused(() => validateParams('sma_cross', { fast: Number.NaN }), 'params.fast', /integer/)
    refused(() => validateParams('bollinger_breakout', { width: 0 }), 'params.width', /^params\.width must be a number between 0\.1 and 10$/)
    refused(() => validateParams('funding_carry', { entry_rate: -0.1 }), 'params.entry_rate', /a number/)
  })

  it('refuses unknown fields and non-objects', () => {
    refused(() => validateParams('sma_cross', { fats: 5 }), 'params.fats', /not a parameter of sma_cross; its parameters are fast, slow, allow_short/)
    refused(() => validateParams('sma_cross', [1, 2]), 'params', /must be an object/)
    refused(() => validateParams('sma_cross', 'fast=10'), 'params', /must be an object/)
  })

  it('checks rules across fields', () => {
    refused(() => validateParams('sma_cross', { fast: 30, slow: 30 }), 'params.fast', /less than params\.slow/)
    refused(() => validateParams('ema_cross', { fast: 40 }), 'params.fast', /less than params\.slow/)
    refused(() => validateParams('macd', { fast: 26 }), 'params.fast', /less than params\.slow/)
    refused(() => validateParams('rsi_reversion', { oversold: 60 }), 'params.oversold', /less than params\.exit/)
    refused(() => validateParams('rsi_reversion', { overbought: 40 }), 'params.overbought', /greater than params\.exit/)
    refused(() => validateParams('funding_carry', { exit_rate: 0.0005 }), 'params.exit_rate', /less than params\.entry_rate/)
    refused(() => validateParams('cross_sectional_momentum', { long_count: 0, short_count: 0 }), 'params.long_count', /at least 1/)
  })

  it('refuses an unknown template naming template_id', () => {
    refused(() => validateParams('sma', {}), 'template_id', /unknown template_id "sma"; one of sma_cross, ema_cross/)
  })
})

describe('validateSymbols', () => {
  it('one symbol for single-symbol templates, at least minSymbols for the others', () => {
    validateSymbols('sma_cross', ['BTCUSDT'])
    refused(() => validateSymbols('sma_cross', ['BTCUSDT', 'ETHUSDT']), 'symbols', /exactly 1/)
    validateSymbols('cross_sectional_momentum', ['BTCUSDT', 'ETHUSDT'])
    refused(() => validateSymbols('cross_sectional_momentum', ['BTCUSDT']), 'symbols', /at least 2/)
  })
})

describe('the registry', () => {
  it('lists the eight templates with schemas whose defaults validate', () => {
    assert.deepEqual(
      TEMPLATES.map((t) => t.id),
      ['sma_cross', 'ema_cross', 'rsi_reversion', 'bollinger_breakout', 'donchian_breakout', 'macd', 'funding_carry', 'cross_sectional_momentum'],
    )
    for (const listing of listTemplates()) {
      const template = TEMPLATES.find((t) => t.id === listing.id)!
      assert.deepEqual(validateParams(listing.id, {}), listing.defaults, `${listing.id} defaults`)
      assert.deepEqual(defaultsOf(template), listing.defaults)
      assert.equal((listing.params_schema as { additionalProperties?: boolean }).additionalProperties, false)
      for (const [name, property] of Object.entries(template.schema.properties as Record<string, Record<string, unknown>>)) {
        assert.ok('default' in property, `${listing.id}.${name} has a default`)
        assert.ok(typeof property.description === 'string', `${listing.id}.${name} has a description`)
        if (property.type !== 'boolean') assert.ok('minimum' in property && 'maximum' in property, `${listing.id}.${name} has bounds`)
      }
      assert.match(listing.min_capital, /^\d+$/)
      assert.equal(listing.multi_symbol, template.multiSymbol)
    }
    assert.deepEqual(
      listTemplates().filter((t) => t.multi_symbol).map((t) => t.id),
      ['cross_sectional_momentum'],
    )
  })
})
