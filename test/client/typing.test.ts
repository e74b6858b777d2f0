import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { BacktestJob, CustomTemplate, PerpetuaClient, Strategy } from '../../src/client/index.js'

/**
 * Compile-time checks (npm run typecheck): the client's calls are typed from the document, not `any`.
 * Each @ts-expect-error fails the type check if the line it marks ever compiles.
 */
export async function typedCalls(client: PerpetuaClient): Promise<void> {
  const job: BacktestJob = await client.get('/v1/backtest/jobs/{id}', { path: { id: 'bt_1' } })
  const status: 'queued' | 'running' | 'done' | 'failed' | 'cancelled' = job.status
  void status
  // @ts-expect-error the path parameter is required
  await client.get('/v1/backtest/jobs/{id}')
  // @ts-expect-error no such path
  await client.get('/v1/nothing-here')
  // @ts-expect-error the query's symbol is required
  await client.get('/smart-money/signal/overview')
  await client.get('/smart-money/signal/overview', { query: { symbol: 'BTCUSDT' } })
  await client.get('/v1/webhooks') // every query parameter optional: no options needed
  // @ts-expect-error GET has no body
  await client.get('/v1/strategies', { body: {} })
  // @ts-expect-error limit is a number
  await client.get('/v1/strategies', { query: { limit: 'ten' } })
  // @ts-expect-error capital is a decimal string
  await client.strategies.create({ name: 'x', template_id: 'sma_cross', params: {}, symbols: ['BTCUSDT'], timeframe: '1h', capital: 1000 })
  const strategy: Strategy = await client.strategies.deploy('strat_1', { dry_run: true })
  // @ts-expect-error status is a closed enum
  const wrong: 'running' = strategy.status
  void wrong
  for await (const item of client.iterate('/v1/webhooks')) {
    const url: string = item.url
    void url
  }
  // @ts-expect-error the backtest list is paged, the exchange info is not
  client.iterate('/v1/market/exchange-info')
  // Protective exits (issue 30): typed on the request and the result, on jobs and sweeps.
  const guarded: BacktestJob = await client.backtests.create({ template_id: 'sma_cross', exits: { stop_loss: '0.02', trigger: 'mark' }, slippage_bps: '2' })
  const reason: 'signal' | 'liquidation' | 'adl' | 'stop_loss' | 'take_profit' | 'trailing_stop' | undefined = guarded.result?.trades?.[0]?.exit_reason
  const stops: number | undefined = guarded.result?.metrics.exit_reasons?.stop_loss
  const resolved: number | undefined = guarded.result?.exit_resolution?.BTCUSDT?.['1m']
  const ambiguous: number | undefined = guarded.result?.ambiguous_exits?.by_symbol.BTCUSDT
  const trigger: 'last' | 'mark' | undefined = guarded.config.exits?.trigger
  void [reason, stops, resolved, ambiguous, trigger]
  // @ts-expect-error exits are decimal strings
  await client.backtests.create({ exits: { stop_loss: 0.02 } })
  // @ts-expect-error trigger is last or mark
  await client.backtests.create({ exits: { stop_loss: '0.02', trigger: 'index' } })
  await client.sweeps.create({ base: { template_id: 'sma_cross', exits: { take_profit: '0.05' } }, grid: { 'exits.stop_loss': [0.01, '0.02'] } })
  const uploaded: CustomTemplate = await client.templates.create({ name: 'mine', source: 'export …', language: 'typescript' })
  const version: number = uploaded.version
  void version
  // @ts-expect-error language is javascript or typescript
  await client.templates.create({ name: 'mine', source: 'export …', language: 'python' })
  // @ts-expect-error an upload needs the source
  await client.templates.update('tpl-0123456789abcdef', { name: 'renamed' })
  const detail = await client.templates.get('tpl-0123456789abcdef')
  // @ts-expect-error only a custom template has a source: narrow on custom first
  void detail.source
  if (detail.custom) {
    const source: string = detail.source
    void source
  }
}

describe('client typing', () => {
  it('is checked by the compiler (this file type-checks only if the calls are typed)', () => {
    assert.equal(typeof typedCalls, 'function')
  })
})
