import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { PerpetuaClient } from '../../src/client/index.js'
import { tempDir } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { killChildren, parseSingleJsonLine, runCli, type ServerProcess, startServe } from './cli-process.js'

// Protective exits through the CLI (issue 30): the flags reach the request (read back from the job's and the
// strategy's config) and the tables show what closed each trade. A real `perpetua serve` child on the replay
// exchange, whose BTCUSDT 1m bars (2025-05-04..06-24) the exits are examined on.

const STRATEGY = ['--template', 'sma_cross', '--param', 'fast=10', '--param', 'slow=30', '--symbols', 'BTCUSDT', '--timeframe', '1h', '--capital', '10000']
const RANGE = ['--start', '2025-05-05T00:00:00Z', '--end', '2025-06-10T23:00:00Z']
const JOB = [...STRATEGY, ...RANGE]
// Tight levels, so a few weeks of 1h bars close trades on both sides.
const EXITS = ['--stop-loss', '0.005', '--take-profit', '0.01', '--trigger', 'last']

describe('perpetua protective exit flags against a running perpetua serve', () => {
  const dataDir = tempDir('cli-exits')
  const home = tempDir('cli-exits-home')
  let server: ServerProcess
  let env: Record<string, string>
  let client: PerpetuaClient

  before(async () => {
    server = await startServe({ DATA_DIR: dataDir, WORKERS: '1' })
    const created = await runCli(['keys', 'create', '--email', 'stops@example.test', '--scopes', 'backtests:read,backtests:write,strategies:read,strategies:write'], { DATA_DIR: dataDir })
    assert.equal(created.code, 0, created.stderr)
    const key = parseSingleJsonLine(created.stdout) as KeyPair
    env = { HOME: home, PERPETUA_URL: server.url, PERPETUA_API_KEY: key.api_key, PERPETUA_API_SECRET: key.api_secret }
    client = new PerpetuaClient({ baseUrl: server.url, apiKey: key.api_key, apiSecret: key.api_secret })
  })
  after(async () => {
    await killChildren()
    fs.rmSync(dataDir, { recursive: true, force: true })
    fs.rmSync(home, { recursive: true, force: true })
  })

  it('backtest run sends the exits and slippage, and the summary shows reasons, resolution and ambiguous exits', async () => {
    const result = await runCli(['backtest', 'run', ...JOB, ...EXITS, '--slippage-bps', '2'], env)
    assert.equal(result.code, 0, result.stderr)
    const id = /^(bt_[0-9a-f]+) done:/.exec(result.stdout)?.[1]
    assert.ok(id, result.stdout)
    const job = await client.backtests.wait(id) // waits out the 5 s since the CLI's last poll
    assert.deepEqual(job.config.exits, { stop_loss: '0.005', take_profit: '0.01', trigger: 'last' })
    assert.equal(job.config.slippage_bps, '2')

    const reasons = job.result!.metrics.exit_reasons!
    assert.ok(reasons.stop_loss > 0 && reasons.take_profit > 0, JSON.stringify(reasons))
    const reasonLine = /^exit reasons: (.+)$/m.exec(result.stdout)?.[1]
    for (const [reason, count] of Object.entries(reasons)) if (count > 0) assert.ok(reasonLine?.includes(`${reason} ${count}`), `${reason} ${count} not in ${reasonLine}`)
    assert.match(result.stdout, /^exits: stop loss 0\.5%, take profit 1%, trigger last$/m)
    assert.match(result.stdout, /^slippage: 2 bps$/m)
    // Every protected 1h bar of this range lies in the replay's 1m history.
    const oneMinute = job.result!.exit_resolution!.BTCUSDT!['1m']!
    assert.ok(oneMinute > 0)
    assert.match(result.stdout, new RegExp(`^exit resolution: BTCUSDT: 1m ${oneMinute.toLocaleString('en-US')} bars`, 'm'))
    assert.match(result.stdout, new RegExp(`^ambiguous exits: ${job.result!.ambiguous_exits!.total}`, 'm'))

    const show = await runCli(['backtest', 'show', id, '--trades'], env)
    assert.equal(show.code, 0, show.stderr)
    assert.match(show.stdout, /│ exit price +│ exit reason +│ qty +│/)
    const shownReasons = [...show.stdout.matchAll(/^│ (\d+) +│ (?:buy|sell) .*│ (signal|stop_loss|take_profit|trailing_stop|liquidation|adl) +│/gm)].map((m) => [Number(m[1]), m[2]])
    assert.deepEqual(shownReasons, job.result!.trades!.map((t) => [t.id, t.exit_reason]))
  })

  it('a bad exit is refused with the field the API names; a job without exit flags keeps the old config and summary', async () => {
    const refused = await runCli(['backtest', 'run', ...JOB, '--stop-loss', '2', '--detach'], env)
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /exits\.stop_loss/)
    const usage = await runCli(['backtest', 'run', ...JOB, '--trigger', 'index'], env)
    assert.equal(usage.code, 2)

    const plain = await runCli(['backtest', 'run', ...JOB, '--detach', '--json'], env)
    assert.equal(plain.code, 0, plain.stderr)
    const queued = parseSingleJsonLine(plain.stdout) as { id: string; config: Record<string, unknown> }
    assert.equal('exits' in queued.config, false)
    assert.equal('slippage_bps' in queued.config, false)
    const done = await client.backtests.wait(queued.id)
    assert.equal(done.result!.metrics.exit_reasons, undefined)
  })

  it('--file exits merge with the flags key by key', async () => {
    const file = `${home}/job.json`
    fs.writeFileSync(file, JSON.stringify({ exits: { stop_loss: '0.01', take_profit: '0.03' } }))
    const result = await runCli(['backtest', 'run', '--file', file, ...JOB, '--take-profit', '0.02', '--detach', '--json'], env)
    assert.equal(result.code, 0, result.stderr)
    const queued = parseSingleJsonLine(result.stdout) as { config: { exits: unknown } }
    assert.deepEqual(queued.config.exits, { stop_loss: '0.01', take_profit: '0.02', trigger: 'last' })
  })

  it('strategies create and update set the exits, show lists them, update --no-exits removes them', async () => {
    const created = await runCli(['strategies', 'create', '--name', 'guarded', ...STRATEGY, '--trailing-stop', '0.01', '--trailing-activation', '0.02', '--trigger', 'mark'], env)
    assert.equal(created.code, 0, created.stderr)
    const id = /│ id +│ (strat_[0-9a-f]+) +│/.exec(created.stdout)?.[1]
    assert.ok(id, created.stdout)
    assert.match(created.stdout, /│ exits +│ trailing stop 1%, trailing activation 2%, trigger mark +│/)
    assert.deepEqual((await client.strategies.get(id)).exits, { trailing_stop: '0.01', trailing_activation: '0.02', trigger: 'mark' })

    const updated = await runCli(['strategies', 'update', id, '--stop-loss', '0.03', '--json'], env)
    assert.equal(updated.code, 0, updated.stderr)
    // The flags replace the stored exits as a whole (PATCH semantics), trigger spelled out.
    assert.deepEqual((parseSingleJsonLine(updated.stdout) as { exits: unknown }).exits, { stop_loss: '0.03', trigger: 'last' })

    const bad = await runCli(['strategies', 'update', id, '--take-profit', '-1'], env)
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /exits\.take_profit/)
    assert.deepEqual((await client.strategies.get(id)).exits, { stop_loss: '0.03', trigger: 'last' })

    const removed = await runCli(['strategies', 'update', id, '--no-exits'], env)
    assert.equal(removed.code, 0, removed.stderr)
    assert.match(removed.stdout, /│ exits +│ - +│/)
    assert.equal((await client.strategies.get(id)).exits, null)
    const both = await runCli(['strategies', 'update', id, '--no-exits', '--stop-loss', '0.01'], env)
    assert.equal(both.code, 2)
  })

  it('sweep run puts the exits and slippage in its base', async () => {
    const result = await runCli(['sweep', 'run', '--template', 'sma_cross', '--param', 'slow=30', '--symbols', 'BTCUSDT', '--timeframe', '1h', ...RANGE, ...EXITS, '--slippage-bps', '1', '--grid', 'fast=5,10', '--detach', '--json'], env)
    assert.equal(result.code, 0, result.stderr)
    const queued = parseSingleJsonLine(result.stdout) as { id: string; config: { base: Record<string, unknown>; grid: Record<string, unknown>; configurations: number } }
    assert.deepEqual(queued.config.base.exits, { stop_loss: '0.005', take_profit: '0.01', trigger: 'last' })
    assert.equal(queued.config.base.slippage_bps, '1')
    assert.deepEqual(queued.config.grid, { fast: [5, 10] })
    assert.equal(queued.config.configurations, 2)
    await client.sweeps.cancel(queued.id).catch(() => undefined) // leave the worker to nothing else
  })
})
