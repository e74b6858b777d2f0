import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, describe, it } from 'node:test'
import { pino } from 'pino'
import { loadConfig } from '../../src/config.js'
import { startMetricsListener } from '../../src/ops/metrics-listener.js'
import { killChildren, poll, startServe } from '../cli/cli-process.js'
import { tempDir } from '../support/database.js'

/** A logger whose lines the test reads. */
function memoryLogger(): { log: pino.Logger; lines: () => { level: number; msg: string }[] } {
  const chunks: string[] = []
  const log = pino({ level: 'info' }, { write: (chunk: string) => void chunks.push(chunk) })
  return { log, lines: () => chunks.map((chunk) => JSON.parse(chunk) as { level: number; msg: string }) }
}

describe('METRICS_ADDR', () => {
  it('is host:port or off, 127.0.0.1:9464 by default; anything else is a configuration error', () => {
    assert.deepEqual(loadConfig({}).metricsAddr, { host: '127.0.0.1', port: 9464 })
    assert.equal(loadConfig({ METRICS_ADDR: 'off' }).metricsAddr, 'off')
    assert.deepEqual(loadConfig({ METRICS_ADDR: '0.0.0.0:9100' }).metricsAddr, { host: '0.0.0.0', port: 9100 })
    assert.deepEqual(loadConfig({ METRICS_ADDR: '[::1]:0' }).metricsAddr, { host: '::1', port: 0 })
    for (const bad of ['9464', 'localhost', 'host:99999', 'a b:1']) assert.throws(() => loadConfig({ METRICS_ADDR: bad }), /METRICS_ADDR must be host:port/, bad)
  })
})

describe('the metrics listener', () => {
  it('serves the process registry at /metrics and nothing else', async () => {
    const { log } = memoryLogger()
    const listener = await startMetricsListener({ host: '127.0.0.1', port: 0 }, log)
    try {
      assert.ok(listener.url)
      const res = await fetch(`${listener.url}/metrics`)
      assert.equal(res.status, 200)
      assert.match(String(res.headers.get('content-type')), /^text\/plain; version=0\.0\.4/)
      const body = await res.text()
      assert.match(body, /^# TYPE perpetua_webhook_deliveries_total counter$/m)
      assert.match(body, /^process_cpu_user_seconds_total /m)
      assert.equal((await fetch(`${listener.url}/`)).status, 404)
      assert.equal((await fetch(`${listener.url}/metrics`, { method: 'POST' })).status, 404)
    } finally {
      await listener.close()
    }
  })

  it('logs an error and gives up when its port is taken, without failing its caller', async () => {
    const taken = http.createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port } = taken.address() as AddressInfo
    const { log, lines } = memoryLogger()
    try {
      const listener = await startMetricsListener({ host: '127.0.0.1', port }, log)
      assert.equal(listener.url, undefined)
      await listener.close()
      const error = lines().find((line) => line.level === 50)
      assert.match(error?.msg ?? '', /metrics: the listener could not start/)
    } finally {
      taken.close()
    }
  })

  it('is not started when off', async () => {
    const listener = await startMetricsListener('off', memoryLogger().log)
    assert.equal(listener.url, undefined)
  })
})

describe('perpetua serve and /metrics', () => {
  after(() => killChildren())

  it('serves /metrics on its metrics listener; the API port answers 404 without METRICS_TOKEN', async () => {
    const server = await startServe({ DATA_DIR: tempDir('metrics-serve'), METRICS_ADDR: '127.0.0.1:0', WORKERS: '1' })
    const line = await poll('the metrics listener to log its URL', 30_000, () =>
      server.stdout().split('\n').find((l) => l.includes('metrics listener is serving')),
    )
    const metricsUrl = (JSON.parse(line) as { metrics_url: string }).metrics_url
    assert.notEqual(new URL(metricsUrl).port, String(server.port))
    const scraped = await fetch(metricsUrl)
    assert.equal(scraped.status, 200)
    const body = await scraped.text()
    assert.match(body, /^perpetua_ready 1$/m)
    assert.match(body, /^perpetua_draining 0$/m)
    const api = await fetch(`${server.url}/metrics`)
    assert.equal(api.status, 404)
    assert.doesNotMatch(await api.text(), /perpetua_/)
    server.child.kill('SIGTERM')
    assert.equal((await server.exited()).code, 0)
  })
})
