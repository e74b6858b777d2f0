import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { PerpetuaClient } from '../../src/client/index.js'
import { type ClientServer, startClientServer } from '../client/server.js'
import { tempDir } from '../support/database.js'
import { killChildren, runCli } from './cli-process.js'

// A trader's own module as the CLI shows it (issue 35): by its name and version, never only tpl-…; and an
// error's place in the file they pushed. Child processes talking HTTP to the app on a loopback port.

const ATR_BREAKOUT = `export const params = {
  lookback: { type: 'integer', default: 20, minimum: 2, maximum: 200 },
  atr_period: { type: 'integer', default: 14, minimum: 2, maximum: 100 },
}
export function warmup(p) { return p.lookback }
export function create(p, ctx) { return { onBar(bar) { return NaN } } }
`
// Throws on its first bar, at line 6 column 53 of the file (the smoke run of the upload meets it).
const THROWING = ATR_BREAKOUT.replace('export function create(p, ctx) { return { onBar(bar) { return NaN } } }', 'export function create(p, ctx) { return { onBar(bar) { throw new Error("no bars") } } }')
const RANGE = { symbols: ['BTCUSDT'], timeframe: '1h' as const, start: '2023-01-01T00:00:00Z', end: '2023-03-31T23:00:00Z', capital: '10000' }

describe('perpetua shows a custom template by its name', () => {
  const dir = tempDir('cli-template-names')
  let server: ClientServer
  let env: Record<string, string>
  let client: PerpetuaClient
  let id: string

  before(async () => {
    // A wall clock (the children sign with the real time); a queue without workers: jobs and sweeps stay queued.
    server = await startClientServer('pglite', {}, { wallClock: true, replay: true, queue: 'queue' })
    const key = await server.t.createKey(['strategies:read', 'strategies:write', 'backtests:read', 'backtests:write'])
    env = { HOME: dir, PERPETUA_URL: server.baseUrl, PERPETUA_API_KEY: key.api_key, PERPETUA_API_SECRET: key.api_secret }
    client = server.client(key, { now: Date.now })
  })
  after(async () => {
    await killChildren()
    await server?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("names the pushed file in an error's place", async () => {
    fs.writeFileSync(path.join(dir, 'atr-breakout.js'), THROWING)
    const refused = await runCli(['templates', 'push', path.join(dir, 'atr-breakout.js')], env)
    assert.equal(refused.code, 1, refused.stderr)
    assert.match(refused.stderr, /Error: no bars \(atr-breakout\.js 6:\d+\)/)
    assert.ok(!refused.stderr.includes('strategy.js'), refused.stderr)
  })

  it('lists and shows backtests, strategies and sweeps with the name and version', async () => {
    fs.writeFileSync(path.join(dir, 'atr-breakout.js'), ATR_BREAKOUT)
    const pushed = await runCli(['templates', 'push', path.join(dir, 'atr-breakout.js')], env)
    assert.equal(pushed.code, 0, pushed.stderr)
    id = /^(tpl-[0-9a-f]{16}) version 1\n$/.exec(pushed.stdout)![1]!
    const job = await client.backtests.create({ ...RANGE, template_id: id, params: {} })
    const strategy = await client.strategies.create({ name: 'breakout', symbols: RANGE.symbols, timeframe: RANGE.timeframe, template_id: id, params: {}, capital: '1000' })
    const sweep = await client.sweeps.create({ base: { ...RANGE, template_id: id, params: {} }, grid: { lookback: [10, 20] } })

    const shows: [string[], string][] = [
      [['backtest', 'show', job.id], job.id],
      [['strategies', 'show', strategy.id], strategy.id],
      [['sweep', 'show', sweep.id], sweep.id],
    ]
    for (const [args, subject] of shows) {
      const shown = await runCli(args, env)
      assert.equal(shown.code, 0, `${args.join(' ')}: ${shown.stderr}`)
      assert.ok(shown.stdout.includes(`atr-breakout v1 (${id})`), `${subject}: ${shown.stdout}`)
    }
    for (const args of [['backtest', 'list'], ['strategies', 'list'], ['sweep', 'list']]) {
      const listed = await runCli(args, env)
      assert.equal(listed.code, 0, `${args.join(' ')}: ${listed.stderr}`)
      assert.match(listed.stdout, /│ atr-breakout v1 +│/, `${args.join(' ')}: ${listed.stdout}`)
      assert.ok(!listed.stdout.includes(id), `${args.join(' ')} shows the id: ${listed.stdout}`)
    }
    // A built-in stays its id, and costs no catalogue read (nothing custom to name).
    await client.backtests.create({ ...RANGE, template_id: 'sma_cross', params: {} })
    const both = await runCli(['backtest', 'list'], env)
    assert.match(both.stdout, /│ sma_cross +│/)
  })
})
