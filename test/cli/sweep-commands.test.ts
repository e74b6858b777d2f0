import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { PerpetuaClient } from '../../src/client/index.js'
import { gridFlag, spaceFlag, walkForwardFlag } from '../../src/cli/sweep/grid-flags.js'
import { efficiencyWords, probability, WALK_FORWARD_EFFICIENCY } from '../../src/sweeps/statistics-words.js'
import { tempDir } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { killChildren, parseSingleJsonLine, runCli, type ServerProcess, startServe } from './cli-process.js'

const SWEEP = ['--template', 'sma_cross', '--grid', 'fast=5..15:5', '--grid', 'slow=20,40', '--symbols', 'BTCUSDT', '--timeframe', '1h', '--start', '2024-01-01T00:00:00Z', '--end', '2024-03-31T23:00:00Z']

describe('sweep flags', () => {
  it('reads ranges, lists and booleans, and refuses what is not one', () => {
    assert.deepEqual(gridFlag('fast=5..50:5', undefined), { fast: [5, 10, 15, 20, 25, 30, 35, 40, 45, 50] })
    assert.deepEqual(gridFlag('slow=20,30,50,100', { fast: [1] }), { fast: [1], slow: [20, 30, 50, 100] })
    assert.deepEqual(gridFlag('k=0.1..0.3:0.1', undefined), { k: [0.1, 0.2, 0.3] })
    assert.deepEqual(gridFlag('allow_short=true,false', undefined), { allow_short: [true, false] })
    assert.deepEqual(spaceFlag('fast=2..20', undefined), { fast: { min: 2, max: 20 } })
    assert.deepEqual(walkForwardFlag('365,90,anchored'), { in_sample_days: 365, out_of_sample_days: 90, anchored: true })
    for (const bad of ['fast', 'fast=', 'fast=50..5', 'fast=1..9:0', 'fast=a,b']) assert.throws(() => gridFlag(bad, undefined), bad)
    assert.throws(() => walkForwardFlag('365'))
  })
})

describe('perpetua sweep against a running perpetua serve', () => {
  const dataDir = tempDir('cli-sweep')
  const home = tempDir('cli-sweep-home')
  let server: ServerProcess
  let env: Record<string, string>
  let client: PerpetuaClient

  before(async () => {
    server = await startServe({ DATA_DIR: dataDir, WORKERS: '2' })
    const created = await runCli(['keys', 'create', '--email', 'quant@example.test', '--scopes', 'backtests:read,backtests:write'], { DATA_DIR: dataDir })
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

  it('run shows progress on stderr, then the top runs by the objective and the statistics in words', async () => {
    const result = await runCli(['sweep', 'run', ...SWEEP, '--walk-forward', '30,15'], env)
    const id = /^(sw_[0-9a-f]{8}) (done|failed): sma_cross BTCUSDT 1h.*grid of fast × slow: 6 configurations, objective sharpe/m.exec(result.stdout)?.[1]
    assert.ok(id, `no summary line: ${result.stdout}\n${result.stderr}`)
    const lines = result.stderr.trim().split('\n').filter((line) => line.startsWith(`${id} [`))
    assert.match(lines[0]!, new RegExp(`^${id} \\[-+\\] 0% \\| queued`))
    // The table: every run, best first, as the API ranks them.
    const ranked = (await client.sweeps.runs(id, { sort: 'objective' })).data
    assert.equal(ranked.length, 6)
    const tableRuns = [...result.stdout.matchAll(/│ (r\d+) +│/g)].map((m) => m[1])
    assert.deepEqual(tableRuns, ranked.map((run) => run.run_id))
    assert.equal(result.code, 0, result.stderr)
    const shown = await client.sweeps.wait(id) // waits out the 5 s since the CLI's last poll
    const { pbo, dsr } = shown.result!.statistics
    // Six configurations are below the 16 the PBO and DSR need: the numbers without a verdict (issue 35).
    assert.match(result.stdout, /^Only 6 configurations: the PBO and the DSR compare configurations/m)
    assert.match(result.stdout, new RegExp(`^PBO ${probability(pbo.value!)}\\. In `, 'm'))
    assert.match(result.stdout, new RegExp(`^DSR ${probability(dsr!)}\\. The probability .*a search of 6 skill-less configurations would find by luck`, 'm'))
    // fast swept over 5, 10, 15: a best run at 5 or 15 sits on the grid's edge (slow has two values: no edge).
    const fast = ranked[0]!.params.fast
    const edge = /^The best run sits on the edge of the grid: (.*)\. Widen the grid/m.exec(result.stdout)?.[1]
    assert.equal(edge, fast === 15 ? "fast = 15 is the grid's largest value" : fast === 5 ? "fast = 5 is the grid's smallest value" : undefined, result.stdout)
    assert.match(result.stdout, new RegExp(`^best: ${ranked[0]!.run_id} \\(fast=`, 'm'))
    // Walk-forward efficiency read, and defined where it is shown (issue 35).
    const walk = shown.result!.walk_forward!
    const printed = result.stdout.split('\n')
    const at = printed.findIndex((line) => line.startsWith('walk-forward (rolling, by sharpe): '))
    assert.ok(at >= 0 && printed[at]!.endsWith(`, efficiency ${efficiencyWords(walk.efficiency, walk.reason)}.`), result.stdout)
    assert.equal(printed[at + 1], WALK_FORWARD_EFFICIENCY)
  })

  it('list, show --json, and cancel of a detached sweep', async () => {
    // 800 configurations over three years: still running when the cancel comes.
    const long = ['--start', '2022-01-01T00:00:00Z', '--end', '2024-12-31T23:00:00Z', '--grid', 'fast=2..41', '--grid', 'slow=100..195:5']
    const detached = await runCli(['sweep', 'run', ...SWEEP, ...long, '--detach'], env)
    assert.equal(detached.code, 0, detached.stderr)
    const id = /^(sw_[0-9a-f]{8}) queued: (\d+) configurations/.exec(detached.stdout)
    assert.ok(id, detached.stdout)
    assert.equal(id[2], '800')
    const cancelled = await runCli(['sweep', 'cancel', id[1]!, '--reason', 'changed my mind'], env)
    assert.equal(cancelled.code, 0, cancelled.stderr)
    assert.match(cancelled.stdout, new RegExp(`^${id[1]} cancelled at \\d+%`))
    const listed = await runCli(['sweep', 'list'], env)
    assert.equal(listed.code, 0, listed.stderr)
    assert.match(listed.stdout, new RegExp(`${id[1]} +│ cancelled`))
    const shown = await runCli(['sweep', 'show', id[1]!, '--json'], env)
    assert.equal(shown.code, 0, shown.stderr)
    const printed = parseSingleJsonLine(shown.stdout) as { id: string; status: string; config: { configurations: number } }
    assert.deepEqual([printed.id, printed.status, printed.config.configurations], [id[1], 'cancelled', 800])
    const again = await runCli(['sweep', 'cancel', id[1]!], env)
    assert.equal(again.code, 1)
    assert.match(again.stderr, /already cancelled/)
  })

  it("an API refusal prints the API's message and exits 1; a bad flag exits 2", async () => {
    const refused = await runCli(['sweep', 'run', ...SWEEP, '--grid', 'fats=1,2'], env)
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /fats is not a parameter of sma_cross/)
    const usage = await runCli(['sweep', 'run', ...SWEEP, '--grid', 'fast'], env)
    assert.equal(usage.code, 2)
    const backwards = await runCli(['sweep', 'run', ...SWEEP, '--grid', 'fast=50..5:5'], env)
    assert.equal(backwards.code, 2)
    assert.match(backwards.stderr, /fast: "50\.\.5:5" runs backwards: write the smaller end first/)
  })

  it('a range the exchange holds no bar of is NO_DATA naming symbol and range, not advice about cscv_blocks (issue 35)', async () => {
    const empty = await runCli(['sweep', 'run', ...SWEEP, '--start', '2019-01-01T00:00:00Z', '--end', '2019-01-20T00:00:00Z'], env)
    assert.equal(empty.code, 1, empty.stdout)
    assert.match(empty.stderr, /no BTCUSDT 1h bars between 2019-01-01T00:00Z and 2019-01-20T00:00Z; the exchange has BTCUSDT 1h bars from 2019-09-08T17:00Z/)
    assert.ok(!empty.stderr.includes('cscv_blocks'), empty.stderr)
    // A module param out of its bounds in a grid names the value (issue 35).
    const outside = await runCli(['sweep', 'run', ...SWEEP, '--grid', 'fast=5,5000'], env)
    assert.equal(outside.code, 1)
    assert.match(outside.stderr, /grid\.fast must be an integer between 2 and 999; 5000 is not/)
  })
})
