import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { PerpetuaClient } from '../../src/client/index.js'
import { compact, money, num } from '../../src/format/numbers.js'
import { tempDir } from '../support/database.js'
import { type HttpsReceiver, startHttpsReceiver, testCertificates } from '../support/https-receiver.js'
import type { KeyPair } from '../support/signing.js'
import { killChildren, parseSingleJsonLine, poll, runCli, type ServerProcess, startCli, startCliOnTerminal, startServe } from './cli-process.js'

// The user CLI as a user runs it: `perpetua <client command>` child processes talking HTTP to a real
// `perpetua serve` child (embedded database, built-in replay exchange, in-process workers).

const JOB = ['--template', 'sma_cross', '--param', 'fast=10', '--param', 'slow=30', '--symbols', 'BTCUSDT', '--timeframe', '1h', '--start', '2024-01-01T00:00:00Z', '--end', '2024-03-31T23:00:00Z', '--capital', '10000']

describe('perpetua client commands against a running perpetua serve', () => {
  const dataDir = tempDir('cli-client')
  const home = tempDir('cli-home') // no profile file of the machine's user leaks in
  let server: ServerProcess
  let receiver: HttpsReceiver
  let key: KeyPair
  let env: Record<string, string>
  let client: PerpetuaClient

  before(async () => {
    receiver = await startHttpsReceiver()
    server = await startServe({ DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: testCertificates().caFile, WORKERS: '1' })
    const scopes = 'backtests:read,backtests:write,strategies:read,strategies:write,webhooks:read,webhooks:write'
    const created = await runCli(['keys', 'create', '--email', 'trader@example.test', '--scopes', scopes], { DATA_DIR: dataDir })
    assert.equal(created.code, 0, created.stderr)
    key = parseSingleJsonLine(created.stdout) as KeyPair
    env = { HOME: home, PERPETUA_URL: server.url, PERPETUA_API_KEY: key.api_key, PERPETUA_API_SECRET: key.api_secret }
    client = new PerpetuaClient({ baseUrl: server.url, apiKey: key.api_key, apiSecret: key.api_secret })
  })
  after(async () => {
    await killChildren()
    await receiver?.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
    fs.rmSync(home, { recursive: true, force: true })
  })

  describe('backtest', () => {
    it('run shows progress on stderr while the job runs, then the metrics table on stdout', async () => {
      const result = await runCli(['backtest', 'run', ...JOB], env)
      assert.equal(result.code, 0, result.stderr)
      const id = /^(bt_[0-9a-f]+) done: sma_cross BTCUSDT 1h/.exec(result.stdout)?.[1]
      assert.ok(id, `no summary line: ${result.stdout}`)
      // One progress line per poll on a pipe: the queued job first, done at 100% last.
      const lines = result.stderr.trim().split('\n')
      assert.match(lines[0]!, new RegExp(`^${id} \\[-+\\] 0% \\| queued`))
      assert.match(lines.at(-1)!, new RegExp(`^${id} \\[#+\\] 100% \\| done \\| \\d+s$`))
      assert.ok(lines.every((line) => line.startsWith(`${id} [`)), result.stderr)
      // The table holds the API's metrics (the list carries them; a GET now would be a poll too soon).
      const listed = (await client.backtests.list({ limit: 1 })).data[0]!
      assert.equal(listed.id, id)
      const m = listed.result!.metrics
      const row = (name: string) => new RegExp(`│ ${name.replace('/', '\\/')} +│ ([^│]+?) +│`).exec(result.stdout)?.[1]
      assert.equal(row('total trades'), String(m.total_trades))
      assert.equal(row('sharpe'), String(Number(Number(m.sharpe).toFixed(4))))
      assert.equal(row('max drawdown'), `${Number((Number(m.max_drawdown) * 100).toFixed(2))}%`)
      assert.equal(row('win rate'), m.win_rate === null ? '-' : `${Number((Number(m.win_rate) * 100).toFixed(2))}%`)
      for (const name of ['final equity', 'return', 'profit factor', 'expected value / trade', 'cagr', 'sortino', 'calmar', 'avg trade duration']) assert.ok(row(name), `no ${name} row`)
    })

    it("run --json prints exactly the API's finished job", async () => {
      const result = await runCli(['backtest', 'run', ...JOB, '--param', 'fast=12', '--json'], env)
      assert.equal(result.code, 0, result.stderr)
      const printed = parseSingleJsonLine(result.stdout) as { id: string; status: string; result: { equity_curve: unknown[]; trades: unknown[] } }
      assert.equal(printed.status, 'done')
      assert.ok(printed.result.equity_curve.length > 80 && printed.result.trades.length > 0)
      // The client's own wait honours the 5 s polling limit the CLI's last poll started.
      assert.deepEqual(await client.backtests.wait(printed.id), printed)
      assert.match(result.stderr, /100% \| done/)
    })

    it("an API refusal prints the API's message and code on stderr and exits 1; a usage error exits 2", async () => {
      const refused = await runCli(['backtest', 'run', ...JOB, '--template', 'no_such_template'], env)
      assert.equal(refused.code, 1)
      assert.equal(refused.stdout, '')
      assert.match(refused.stderr, /^perpetua: .*no_such_template.* \(INVALID_PARAMETER, HTTP 400, field template_id, request [\w-]+\)\n$/)

      const missing = await runCli(['backtest', 'show', 'bt_00000000'], env)
      assert.equal(missing.code, 1)
      assert.match(missing.stderr, /\(NOT_FOUND, HTTP 404/)

      const usage = await runCli(['backtest', 'run', ...JOB, '--leverage', 'lots'], env)
      assert.equal(usage.code, 2)
      assert.match(usage.stderr, /--leverage <n>' argument 'lots' is invalid/)

      const noKey = await runCli(['backtest', 'list'], { HOME: home, PERPETUA_URL: server.url })
      assert.equal(noKey.code, 2)
      assert.match(noKey.stderr, /needs credentials.*PERPETUA_API_KEY and PERPETUA_API_SECRET/)
    })

    it('list and show read the jobs; cancel refuses a finished job with the API\'s 409', async () => {
      const list = await runCli(['backtest', 'list', '--json'], env)
      assert.equal(list.code, 0, list.stderr)
      const page = parseSingleJsonLine(list.stdout) as { data: { id: string }[]; next_cursor: string | null }
      assert.deepEqual(page, await client.backtests.list())
      assert.equal(page.data.length, 2)
      const table = await runCli(['backtest', 'list', '--limit', '1'], env)
      assert.equal(table.code, 0, table.stderr)
      assert.ok(table.stdout.includes(page.data[0]!.id) && !table.stdout.includes(page.data[1]!.id))
      assert.match(table.stderr, /^more: perpetua backtest list --cursor \S+ \(or --all\)$/m)

      const read = await runCli(['backtest', 'show', page.data[1]!.id, '--json'], env)
      assert.equal(read.code, 0, read.stderr)
      const job = parseSingleJsonLine(read.stdout) as { result: { fees_paid: string; funding_paid: string; trades: unknown[] } }
      // Right after that read: the API's 429 is waited out (Retry-After), not reported as a failure.
      const show = await runCli(['backtest', 'show', page.data[1]!.id, '--trades'], env)
      assert.equal(show.code, 0, show.stderr)
      assert.match(show.stderr, new RegExp(`^${page.data[1]!.id} was read less than 5 s ago \\(the API allows one read of a job every 5 s\\): waiting [1-5] s$`, 'm'))
      assert.match(show.stdout, /│ sharpe /)
      const row = (name: string) => new RegExp(`│ ${name.replace(/[()]/g, '\\$&')} +│ ([^│]+?) +│`).exec(show.stdout)?.[1]
      // Money as the dashboard writes it (one formatter): two decimals, thousands separated, in USDT.
      assert.equal(row('fees paid'), money(job.result.fees_paid))
      assert.equal(row('funding paid (negative: received)'), money(job.result.funding_paid))
      assert.match(row('final equity')!, /^\d{1,3}(,\d{3})*\.\d\d USDT$/)
      assert.match(show.stdout, /│ # +│ side +│ symbol +│ entry .*│ pnl \(USDT\) +│ fee \(USDT\) +│ funding \(USDT\) +│/)
      // Prices at BTCUSDT's tick (0.10 in the replay exchange's rules: one decimal), read from exchange info.
      const trade = job.result.trades[0] as { id: number | string; entry_price: string; exit_price: string }
      const tradeRow = show.stdout.split('\n').find((line) => line.startsWith(`│ ${trade.id} `))!
      const cells = tradeRow.split('│').map((cell) => cell.trim())
      assert.deepEqual([cells[5], cells[7]], [num(trade.entry_price, 1), num(trade.exit_price, 1)], tradeRow)
      assert.match(cells[5]!, /^\d{1,3}(,\d{3})*\.\d$/)

      const cancel = await runCli(['backtest', 'cancel', page.data[1]!.id], env)
      assert.equal(cancel.code, 1)
      assert.match(cancel.stderr, /\(INVALID_STATE, HTTP 409/)
    })
  })

  describe('strategies', () => {
    it('create, deploy as a dry run, watch the stream, pause, and list', async () => {
      const create = await runCli(
        ['strategies', 'create', '--name', 'trend', '--template', 'sma_cross', '--params', '{"fast":5,"slow":20}', '--symbols', 'BTCUSDT', '--timeframe', '1m', '--capital', '1000', '--json'],
        env,
      )
      assert.equal(create.code, 0, create.stderr)
      const strategy = parseSingleJsonLine(create.stdout) as { id: string; status: string; params: Record<string, unknown> }
      assert.equal(strategy.status, 'draft')
      assert.equal(strategy.params.fast, 5)

      const deploy = await runCli(['strategies', 'deploy', strategy.id, '--dry-run'], env)
      assert.equal(deploy.code, 0, deploy.stderr)
      assert.match(deploy.stdout, new RegExp(`^${strategy.id} deployed \\(dry run\\) at \\S+Z`))

      const watch = startCli(['strategies', 'watch', strategy.id], env)
      const exited = exitOf(watch.child)
      await poll('the watch to print the current status', 30_000, () => (/ status deployed \| open positions \d+/.test(watch.output().stdout) ? true : undefined))
      assert.match(watch.output().stderr, new RegExp(`^following ${strategy.id} \\(Ctrl-C to stop\\)`))

      const pause = await runCli(['strategies', 'pause', strategy.id, '--close-positions'], env)
      assert.equal(pause.code, 0, pause.stderr)
      assert.match(pause.stdout, new RegExp(`^${strategy.id} paused: open positions 0,`))
      await poll('the watch to print the pause', 30_000, () => (/ status paused \| open positions 0/.test(watch.output().stdout) ? true : undefined))
      watch.child.kill('SIGINT')
      const end = await exited
      assert.equal(end.code, 0, watch.output().stderr)
      assert.match(watch.output().stderr, new RegExp(`stopped following ${strategy.id}\\n$`))
      for (const line of watch.output().stdout.trim().split('\n')) assert.match(line, /^\d{4}-\d\d-\d\dT\S+Z (status|order|position_opened|position_closed|error) /)

      const list = await runCli(['strategies', 'list', '--json'], env)
      assert.equal(list.code, 0, list.stderr)
      const page = parseSingleJsonLine(list.stdout) as { data: { id: string; status: string }[] }
      assert.deepEqual(page, await client.strategies.list())
      assert.equal(page.data.find((s) => s.id === strategy.id)?.status, 'paused')
      const table = await runCli(['strategies', 'list'], env)
      assert.match(table.stdout, new RegExp(`│ ${strategy.id} │ trend +│ paused +│ dry run +│ sma_cross`))
      const show = await runCli(['strategies', 'show', strategy.id], env)
      assert.equal(show.code, 0, show.stderr)
      assert.match(show.stdout, /│ mode +│ dry run \(paper wallet\) +│/)
      assert.match(show.stdout, /│ last bar +│ (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|-) +│/)
      assert.doesNotMatch(show.stdout, /last error/, 'no error, no line')
      const flat = await runCli(['strategies', 'positions', strategy.id], env)
      assert.equal(flat.code, 0, flat.stderr)
      assert.match(flat.stderr, /no open positions/)
      const positions = await runCli(['strategies', 'positions', strategy.id, '--json'], env)
      assert.deepEqual(parseSingleJsonLine(positions.stdout), [])

      const again = await runCli(['strategies', 'pause', strategy.id], env)
      assert.equal(again.code, 1)
      assert.match(again.stderr, /\(INVALID_STATE, HTTP 409/)
    })

    it('deploy names its mode: no flag (or both) is a usage error naming --live and --dry-run, and sends nothing', async () => {
      const strategy = await client.strategies.create({ name: 'unsaid', template_id: 'sma_cross', symbols: ['BTCUSDT'], timeframe: '1h', capital: '500' })
      const neither = await runCli(['strategies', 'deploy', strategy.id], env)
      assert.equal(neither.code, 2, neither.stderr)
      assert.match(neither.stderr, /--live .*--dry-run/)
      const both = await runCli(['strategies', 'deploy', strategy.id, '--live', '--dry-run', '--yes'], env)
      assert.equal(both.code, 2, both.stderr)
      assert.match(both.stderr, /--live and --dry-run exclude each other/)
      // Off a terminal (the test's stdin is not one) nothing can confirm, so --live needs --yes.
      const unconfirmed = await runCli(['strategies', 'deploy', strategy.id, '--live'], env)
      assert.equal(unconfirmed.code, 2, unconfirmed.stderr)
      assert.match(unconfirmed.stderr, /--live off a terminal needs --yes/)
      // On a terminal it asks, naming the strategy, the key the server will pick (an API key cannot list keys) and the capital; "n" sends nothing.
      const asked = startCliOnTerminal(['strategies', 'deploy', strategy.id, '--live', '--capital', '400'], env)
      if (asked) {
        const exited = exitOf(asked.child)
        // What the terminal shows, without readline's cursor codes and the terminal's line ends.
        const shown = () => asked.output().stdout.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r?\n|\r/g, '')
        const prompt = await poll('the question on the terminal', 60_000, () => (shown().includes('[y/N]') ? shown() : undefined))
        assert.match(prompt, new RegExp(`Deploy strategy ${strategy.id} \\(unsaid\\) LIVE on your newest verified exchange key with 400 USDT at 1x\\? Real orders will be placed\\. \\[y/N\\]`))
        asked.child.stdin!.write('n\r')
        const end = await exited
        assert.equal(end.code, 1, asked.output().stdout)
        assert.match(shown(), new RegExp(`not deployed: ${strategy.id} stays draft`))
      }
      const after = await client.strategies.get(strategy.id)
      assert.equal(after.status, 'draft')
      assert.equal(after.mode, null, 'never deployed')
      await client.strategies.delete(strategy.id)
    })

    it('deploy --live --yes says LIVE and names the exchange key; show prints the mode; without a key the refusal names --dry-run', async () => {
      const strategy = await client.strategies.create({ name: 'real money', template_id: 'sma_cross', symbols: ['ETHUSDT'], timeframe: '1h', capital: '500' })
      // No exchange key yet: the API's hint names its body field, the CLI's names the flag.
      const keyless = await runCli(['strategies', 'deploy', strategy.id, '--live', '--yes'], env)
      assert.equal(keyless.code, 1, keyless.stderr)
      assert.match(keyless.stderr, /a live run needs a verified exchange key: .*or deploy with --dry-run \(INVALID_STATE, HTTP 409/)
      assert.doesNotMatch(keyless.stderr, /dry_run true/)
      // The built-in replay exchange's demo account (data/accounts.json), registered by the same user as the API key.
      const issued = await runCli(['tokens', 'issue', '--email', 'trader@example.test'], { DATA_DIR: dataDir })
      assert.equal(issued.code, 0, issued.stderr)
      const bearer = { authorization: `Bearer ${(parseSingleJsonLine(issued.stdout) as { access_token: string }).access_token}`, 'content-type': 'application/json' }
      const registered = await fetch(`${server.url}/v1/exchange-keys`, {
        method: 'POST',
        headers: bearer,
        body: JSON.stringify({ api_key: 'replayDemoApiKey0000000000000000000000000000000000000000000000000', api_secret: 'replayDemoSecretKey000000000000000000000000000000000000000000000', label: 'demo' }),
      })
      assert.equal(registered.status, 200, await registered.clone().text())
      const keyId = ((await registered.json()) as { id: string }).id
      try {
        const deploy = await runCli(['strategies', 'deploy', strategy.id, '--live', '--yes'], env)
        assert.equal(deploy.code, 0, deploy.stderr)
        assert.match(deploy.stdout, new RegExp(`^${strategy.id} deployed LIVE on exchange key ${keyId} \\(demo\\) at \\S+Z`))
        const show = await runCli(['strategies', 'show', strategy.id], env)
        assert.match(show.stdout, new RegExp(`│ mode +│ LIVE on exchange key ${keyId} \\(demo\\) +│`))
      } finally {
        await client.strategies.pause(strategy.id, { close_positions: true })
      }
    })

    it('watch of a strategy that is not there ends with the API\'s 404', async () => {
      const result = await runCli(['strategies', 'watch', 'strat_00000000'], env)
      assert.equal(result.code, 1)
      assert.match(result.stderr, /\(NOT_FOUND, HTTP 404/)
    })
  })

  describe('webhooks', () => {
    it('create prints the secret once, list shows the webhook without it, test delivers to the receiver', async () => {
      const create = await runCli(['webhooks', 'create', '--url', receiver.url, '--events', 'strategy.*,backtest.job_done', '--description', 'from the cli', '--json'], env)
      assert.equal(create.code, 0, create.stderr)
      const created = parseSingleJsonLine(create.stdout) as { id: string; secret: string; events: string[] }
      assert.deepEqual(created.events, ['strategy.*', 'backtest.job_done'])
      assert.match(created.secret, /^[A-Za-z0-9]{40}$/)

      const list = await runCli(['webhooks', 'list', '--json'], env)
      assert.equal(list.code, 0, list.stderr)
      const page = parseSingleJsonLine(list.stdout) as { data: { id: string }[] }
      assert.deepEqual(page, await client.webhooks.list())
      assert.deepEqual(page.data.map((w) => w.id), [created.id])
      assert.ok(!list.stdout.includes(created.secret))
      const table = await runCli(['webhooks', 'list'], env)
      assert.match(table.stdout, new RegExp(`│ ${created.id} │ ${receiver.url.replaceAll('/', '\\/')} │ strategy\\.\\*,backtest\\.job_done │ active `))

      const before = receiver.received.length
      const test = await runCli(['webhooks', 'test', created.id], env)
      assert.equal(test.code, 0, test.stderr)
      assert.match(test.stdout, /^evt_test_[0-9a-f]+ delivered: HTTP 204 in \d+ ms\n$/)
      assert.equal(receiver.received.length, before + 1)

      const duplicate = await runCli(['webhooks', 'create', '--url', receiver.url, '--events', '*'], env)
      assert.equal(duplicate.code, 1)
      assert.match(duplicate.stderr, /\(DUPLICATE_URL, HTTP 409/)
    })
  })

  describe('market', () => {
    it("reads the gateway: funding, tickers, the whale board and a symbol's rules", async () => {
      const info = await runCli(['market', 'info', 'btcusdt', '--json'], env)
      assert.equal(info.code, 0, info.stderr)
      const printed = parseSingleJsonLine(info.stdout) as { symbols: unknown[] }
      assert.deepEqual(printed.symbols, (await new PerpetuaClient({ baseUrl: server.url }).market.exchangeInfo('BTCUSDT')).symbols)
      const table = await runCli(['market', 'info', 'BTCUSDT'], env)
      assert.match(table.stdout, /│ PRICE_FILTER +│ minPrice \S+, maxPrice \S+, tickSize 0\.10 +│/)

      const funding = await runCli(['market', 'funding'], env)
      assert.equal(funding.code, 0, funding.stderr)
      // Prices at each symbol's tick: BTCUSDT's is 0.10, so its mark price has one decimal.
      assert.match(funding.stdout, /│ BTCUSDT +│ -?[\d.]+% +│ \d{1,3}(,\d{3})*\.\d +│/)
      const tickers = await runCli(['market', 'tickers', '--min-quote-volume', '1e6', '--json'], env)
      const rows = parseSingleJsonLine(tickers.stdout) as { symbol: string; lastPrice: string; quoteVolume: string }[]
      const btc = rows.find((r) => r.symbol === 'BTCUSDT')
      assert.ok(btc)
      const board = await runCli(['market', 'tickers', '--min-quote-volume', '1e6'], env)
      assert.equal(board.code, 0, board.stderr)
      // Large volumes in words (165,912,345 reads 165.9M), the last price at the tick. The replay exchange's
      // clock moves between the two reads, so the table is compared with the JSON to 1 %, its form exactly.
      const btcRow = board.stdout.split('\n').find((line) => line.startsWith('│ BTCUSDT '))!.split('│').map((cell) => cell.trim())
      assert.match(btcRow[2]!, /^\d{1,3}(,\d{3})*\.\d$/)
      assert.ok(Math.abs(Number(btcRow[2]!.replaceAll(',', '')) / Number(btc.lastPrice) - 1) < 0.01, `${btcRow[2]} for ${btc.lastPrice}`)
      const words = /^(\d{1,3}(?:\.\d)?)([KMBT])$/.exec(btcRow[6]!)
      assert.ok(words, `quote volume ${btcRow[6]} is not in words`)
      const scale = { K: 1e3, M: 1e6, B: 1e9, T: 1e12 }[words[2] as 'K' | 'M' | 'B' | 'T']
      assert.ok(Math.abs(Number(words[1]) * scale - Number(btc.quoteVolume)) <= 0.05 * scale + 0.01 * Number(btc.quoteVolume), `${btcRow[6]} for ${btc.quoteVolume} (${compact(btc.quoteVolume)})`)
      assert.match(board.stdout, /│ symbol +│ last +│ change +│ high +│ low +│ quote volume \(USDT\) +│ trades +│/)
      const whales = await runCli(['market', 'whales', '--min-quote-volume', '1'], env)
      assert.equal(whales.code, 0, whales.stderr)
      assert.match(whales.stdout, /│ 1 +│ [A-Z0-9]+ +│ [\d.]+ +│ [\d.]+ +│ \d{1,3}(\.\d)?[KMBT]? +│/)
    })
  })

  describe('settings', () => {
    it('takes the server and key from a profile, and names a missing profile', async () => {
      const file = path.join(home, 'profiles.json')
      fs.writeFileSync(file, JSON.stringify({ mine: { url: server.url, api_key: key.api_key, api_secret: key.api_secret } }), { mode: 0o600 })
      const result = await runCli(['--profile', 'mine', 'strategies', 'list', '--json'], { HOME: home, PERPETUA_PROFILES: file })
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stderr, '')
      assert.deepEqual(parseSingleJsonLine(result.stdout), await client.strategies.list())

      const unknown = await runCli(['strategies', 'list', '--profile', 'theirs'], { HOME: home, PERPETUA_PROFILES: file })
      assert.equal(unknown.code, 2)
      assert.match(unknown.stderr, /profile "theirs" is not in .*profiles\.json \(it has mine\)/)
    })

    it('a client command loads neither Fastify nor pg nor Kysely', async () => {
      const record = path.join(home, 'modules.txt')
      const preload = fileURLToPath(new URL('./loaded-modules.mjs', import.meta.url))
      const result = await runCli(['market', 'funding', 'BTCUSDT'], { ...env, NODE_OPTIONS: `--import=${preload}`, LOADED_MODULES_FILE: record })
      assert.equal(result.code, 0, result.stderr)
      const loaded = fs.readFileSync(record, 'utf8').split('\n')
      assert.ok(loaded.some((url) => url.includes('/node_modules/commander/')), 'the recording saw nothing')
      for (const name of ['fastify', 'pg', 'kysely', 'pino', 'pg-boss', '@electric-sql']) {
        assert.ok(!loaded.some((url) => url.includes(`/node_modules/${name}/`)), `${name} was loaded`)
      }
    })
  })
})

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })))
}
