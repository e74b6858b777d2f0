import assert from 'node:assert/strict'
import type { TestApp } from './app.js'
import { poll } from './poll.js'
import type { KeyPair } from './signing.js'

/** A small backtest job on recorded data (sma_cross, BTCUSDT 1h, 2023 Q1): what tests of the job pipeline submit. */
export const SMA_CROSS_JOB = {
  template_id: 'sma_cross',
  params: { fast: 10, slow: 30 },
  symbols: ['BTCUSDT'],
  timeframe: '1h',
  start: '2023-01-01T00:00:00Z',
  end: '2023-03-31T23:00:00Z',
  capital: '10000',
}

/** sma_cross BTCUSDT 1h inside the replay's 1m range (2025-05-04..06-24; its present is 2025-06-17): 41 days, exits resolved on 1m. */
export const ONE_MINUTE_RANGE_JOB = {
  template_id: 'sma_cross',
  params: { fast: 10, slow: 30 },
  symbols: ['BTCUSDT'],
  timeframe: '1h',
  start: '2025-05-05T00:00:00Z',
  end: '2025-06-15T23:00:00Z',
  capital: '10000',
}

/** Polls a job or sweep (`path`) as a client must (at most once per 5 s of test clock) until it is no longer queued or running. */
export function pollEnded(t: TestApp, key: KeyPair, path: string, timeoutMs = 90_000): Promise<Record<string, any>> {
  return poll(path, timeoutMs, async () => {
    t.clock.advance(5000)
    const res = await t.signed(key, 'GET', path)
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    return body.status === 'queued' || body.status === 'running' ? undefined : body
  })
}
