import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { TEMPLATES, defaultsOf, findTemplate, listTemplates } from '../../src/templates/registry.js'
import type { ParamProblem } from '../../src/templates/types.js'
import { resolveParams, symbolsProblem, templateById } from '../../src/templates/validate.js'
import { validParams } from '../engine/helpers.js'

/** The problem resolving these params finds (the template's id, when unknown, is a problem too). */
function paramsProblem(templateId: string, params: unknown): ParamProblem | undefined {
  const template = templateById(templateId)
  const resolved = template.ok ? resolveParams(template.value, params) : template
  return resolved.ok ? undefined : resolved.problem
}

function refused(problem: ParamProblem | undefined, field: string, message: RegExp) {
  assert.ok(problem, 'a problem was expected')
  assert.equal(problem.field, field)
  assert.match(problem.message, message)
}

const symbols = (templateId: string, list: string[]) => symbolsProblem(findTemplate(templateId)!, list)

describe('resolveParams', () => {
  it('applies defaults and keeps given values', () => {
    assert.deepEqual(validParams('sma_cross', {}), { fast: 10, slow: 30, allow_short: false })
    assert.deepEqual(validParams('sma_cross', undefined), { fast: 10, slow: 30, allow_short: false })
    assert.deepEqual(validParams('sma_cross', { slow: 50, allow_short: true }), { fast: 10, slow: 50, allow_short: true })
    assert.deepEqual(validParams('macd', {}), { fast: 12, slow: 26, signal: 9, allow_short: false })
    assert.deepEqual(validParams('bollinger_breakout', { width: 2.5 }), { period: 20, width: 2.5, allow_short: false })
  })

  it('names the field and its bounds', () => {
    refused(paramsProblem('sma_cross', { fast: 1 }), 'params.fast', /^params\.fast must be an integer between 2 and 999$/)
    refused(paramsProblem('sma_cross', { fast: 2.5 }), 'params.fast', /an integer/)
    refused(paramsProblem('sma_cross', { slow: '30' }), 'params.slow', /an integer between 3 and 1000/)
    refused(paramsProblem('sma_cross', { slow: 1001 }), 'params.slow', /between 3 and 1000/)
    refused(paramsProblem('sma_cross', { allow_short: 1 }), 'params.allow_short', /must be true or false/)
    refused(paramsProblem('sma_cross', { fast: Number.NaN }), 'params.fast', /integer/)
    refused(paramsProblem('bollinger_breakout', { width: 0 }), 'params.width', /^params\.width must be a number between 0\.1 and 10$/)
    refused(paramsProblem('funding_carry', { entry_rate: -0.1 }), 'params.entry_rate', /a number/)
  })

  it('refuses unknown fields and non-objects', () => {
    refused(paramsProblem('sma_cross', { fats: 5 }), 'params.fats', /not a parameter of sma_cross; its parameters are fast, slow, allow_short/)
    refused(paramsProblem('sma_cross', [1, 2]), 'params', /must be an object/)
    refused(paramsProblem('sma_cross', 'fast=10'), 'params', /must be an object/)
  })

  it('checks rules across fields', () => {
    refused(paramsProblem('sma_cross', { fast: 30, slow: 30 }), 'params.fast', /less than params\.slow/)
    refused(paramsProblem('ema_cross', { fast: 40 }), 'params.fast', /less than params\.slow/)
    refused(paramsProblem('macd', { fast: 26 }), 'params.fast', /less than params\.slow/)
    refused(paramsProblem('rsi_reversion', { oversold: 60 }), 'params.oversold', /less than params\.exit/)
    refused(paramsProblem('rsi_reversion', { overbought: 40 }), 'params.overbought', /greater than params\.exit/)
    refused(paramsProblem('funding_carry', { exit_rate: 0.0005 }), 'params.exit_rate', /less than params\.entry_rate/)
    refused(paramsProblem('cross_sectional_momentum', { long_count: 0, short_count: 0 }), 'params.long_count', /at least 1/)
  })

  it('refuses an unknown template naming template_id', () => {
    refused(paramsProblem('sma', {}), 'template_id', /unknown template_id "sma"; one of sma_cross, ema_cross/)
  })
})

describe('symbolsProblem', () => {
  it('one symbol for single-symbol templates, at least minSymbols for the others', () => {
    assert.equal(symbols('sma_cross', ['BTCUSDT']), undefined)
    refused(symbols('sma_cross', ['BTCUSDT', 'ETHUSDT']), 'symbols', /exactly 1/)
    assert.equal(symbols('cross_sectional_momentum', ['BTCUSDT', 'ETHUSDT']), undefined)
    refused(symbols('cross_sectional_momentum', ['BTCUSDT']), 'symbols', /at least 2/)
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
      assert.deepEqual(validParams(listing.id, {}), listing.defaults, `${listing.id} defaults`)
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
