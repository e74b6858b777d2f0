import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type BacktestJob, FIRST_POLL_MS, MIN_POLL_INTERVAL_MS } from '../../src/client/index.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { type ClientServer, recordingFetch, startClientServer } from './server.js'

const JOB = {
  template_id: 'sma_cross',
  params: { fast: 10, slow: 30 },
  symbols: ['BTCUSDT'],
  timeframe: '1h' as const,
  start: '2023-01-01T00:00:00Z',
  end: '2023-03-31T23:00:00Z',
  capital: '10000',
}

for (const backend of backends()) {
  describe(`the client polls a backtest job (${backend})`, () => {
    let server: ClientServer
    let key: KeyPair
    before(async () => {
      server = await startClientServer(backend, {}, { replay: true, queue: 'workers' })
      key = await server.t.createKey(['backtests:read', 'backtests:write'])
    })
    after(() => server.close())

    /**
     * A sleep that moves the test app's clock by what was asked (the server's 5 s polling limit reads that
     * clock) and lets 30 ms of real time pass for the worker, recording every requested wait.
     */
    const clockSleep = (waits: number[]) => async (ms: number) => {
      waits.push(ms)
      server.t.clock.advance(ms)
      await new Promise((resolve) => setTimeout(resolve, 30))
    }

    it('waits for done no faster than every 5 s, reporting progress, and honours Retry-After after a 429', async () => {
      const waits: number[] = []
      const recorder = recordingFetch()
      const client = server.client(key, { sleep: clockSleep(waits), fetch: recorder.fetch })
      const created = await client.backtests.create(JOB)
      assert.equal(created.status, 'queued')
      // A GET right before wait(): wait's first poll comes too soon and meets the server's 429.
      await client.backtests.get(created.id)
      const progress: BacktestJob[] = []
      const job = await client.backtests.wait(created.id, { onProgress: (j) => progress.push(j), backoffAfterMs: 0, backoff: 2 })

      assert.equal(job.status, 'done')
      assert.equal(job.progress, 1)
      assert.ok(job.result && Number(job.result.metrics.total_trades) >= 0)
      const limited = recorder.calls.findIndex((call) => call.status === 429)
      assert.ok(limited >= 0, 'the early poll was not refused: the test proves nothing about Retry-After')
      const retryAfterMs = Number(recorder.calls[limited]!.retryAfter) * 1000
      assert.ok(retryAfterMs >= MIN_POLL_INTERVAL_MS)
      assert.ok(waits[0]! >= retryAfterMs, `waited ${waits[0]} ms after Retry-After ${retryAfterMs}`)
      assert.ok(waits.length > 0 && waits.every((ms) => ms >= MIN_POLL_INTERVAL_MS), `a wait under 5 s: ${waits}`)
      for (let i = 1; i < waits.length; i++) assert.ok(waits[i]! >= waits[i - 1]!, `waits shrank: ${waits}`)
      if (waits.length >= 3) assert.ok(waits[2]! > waits[1]!, `no backoff: ${waits}`)
      assert.ok(recorder.calls.filter((call) => call.status === 429).length === 1, 'polled too fast more than once')
      assert.ok(progress.length >= 1 && progress.at(-1)!.status === 'done')
      for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress >= progress[i - 1]!.progress)
    })

    it('run() takes its first look soon after queuing, then keeps 5 s between polls, and never meets a 429', async () => {
      const waits: number[] = []
      const recorder = recordingFetch()
      const client = server.client(key, { sleep: clockSleep(waits), fetch: recorder.fetch })
      const job = await client.backtests.run(JOB)
      assert.equal(job.status, 'done')
      assert.equal(waits[0], FIRST_POLL_MS, `the first wait was ${waits[0]} ms`)
      assert.ok(FIRST_POLL_MS < MIN_POLL_INTERVAL_MS)
      assert.ok(waits.slice(1).every((ms) => ms >= MIN_POLL_INTERVAL_MS), `a later wait under 5 s: ${waits}`)
      assert.deepEqual(recorder.calls.filter((call) => call.status === 429), [], 'a poll was refused')
      assert.equal(recorder.calls.length, waits.length + 1, 'one POST, then one GET after each wait')
    })

    it('refuses to poll faster than every 5 s', async () => {
      const client = server.client(key)
      await assert.rejects(client.backtests.wait('bt_00000000', { intervalMs: 1000 }), RangeError)
    })

    it('returns a job already in a terminal status after one poll, without waiting', async () => {
      const waits: number[] = []
      const client = server.client(key, { sleep: clockSleep(waits) })
      const [finished] = (await client.backtests.list({ status: 'done', limit: 1 })).data
      assert.ok(finished, 'the first test left no done job')
      server.t.clock.advance(5000) // the last poll of that job was the previous test's
      const job = await client.backtests.wait(finished.id)
      assert.equal(job.status, 'done')
      assert.deepEqual(waits, [])
    })
  })
}
