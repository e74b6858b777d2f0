import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import type { BrowserContext, Page } from 'playwright-core'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { activeRun } from '../../src/live/queries.js'
import { enterError } from '../../src/live/run-error.js'
import { deployFastDryRun } from '../live/backtest-parity.js'
import type { TestApp } from '../support/app.js'
import { type HttpsReceiver, startHttpsReceiver, testCertificates } from '../support/https-receiver.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'
import { browserMissing } from './browser.js'
import { type DashboardApp, startDashboardApp } from './dashboard-app.js'

// 1m bars close five times a wall second from 2025-06-17 06:00 UTC (inside the recorded minutes), so a
// dry run trades within seconds; backtests read 2024's recorded hours.
const REPLAY = { speed: 300, replayStart: Date.UTC(2025, 5, 17, 6, 0, 0) }
const SCOPES = ['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write', 'webhooks:read', 'webhooks:write', 'market:read'] as const

/** What the page's chart containers expose (web/src/charts/chart-host.ts). */
interface ChartElement {
  chartSeries: { data(): { time: number; value: number }[] }[]
  dataset: Record<string, string | undefined>
}

interface ApiJob {
  id: string
  status: string
  result: { metrics: Record<string, unknown>; equity_curve: [string, string][]; trades: Record<string, unknown>[] }
}

const skip = browserMissing()

describe('dashboard in headless Chromium (pglite, replay exchange)', { skip }, () => {
  let d: DashboardApp
  let t: TestApp
  let pool: RunnerPool
  let base: string
  let key: KeyPair
  let token: string
  let browser: BrowserContext
  let page: Page
  let receiver: HttpsReceiver
  let pageErrors: string[]

  before(async () => {
    receiver = await startHttpsReceiver()
    d = await startDashboardApp(
      [...SCOPES],
      'trader@example.test',
      { WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: testCertificates().caFile },
      { replay: REPLAY, config: { webhookTimeoutMs: 2000 } },
      { counts: (text) => /Content Security Policy/.test(text) },
    )
    ;({ t, base, key, token, browser, page, consoleErrors: pageErrors } = d)
    pool = new RunnerPool({ db: t.database.handle.db, market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals })
    pool.start()
  })
  after(async () => {
    await pool?.stop()
    await d?.close()
    await receiver?.close()
  })

  const api = <T>(method: string, url: string, body?: unknown): Promise<T> => d.api<T>(method, url, body)
  const jobs = new Map<string, ApiJob>()
  /** A finished job as the API gives it, read once per job (it never changes; reads wait out the 5 s poll limit). */
  const apiJob = async (id: string): Promise<ApiJob> => {
    const kept = jobs.get(id)
    if (kept) return kept
    const job = await d.apiJob<ApiJob>(id)
    if (job.status === 'done') jobs.set(id, job)
    return job
  }

  it('serves the app at /app/ (GET / redirects there) and refuses a wrong app token with the API message', async () => {
    const response = await page.goto(`${base}/`)
    assert.equal(response?.status(), 200)
    assert.equal(new URL(page.url()).pathname, '/app/')
    await page.fill('textarea[name=token]', 'not-a-token')
    await page.click('[data-testid=sign-in-submit]')
    const error = await page.waitForSelector('[data-testid=error]')
    assert.match(await error.innerText(), /token|sign/i)
    await page.fill('textarea[name=token]', token)
    await page.click('[data-testid=sign-in-submit]')
    await page.waitForSelector('[data-testid=backtests-table]')
    assert.equal(new URL(page.url()).pathname, '/app/backtests')
  })

  let first: string
  it('builds the form from the template schemas, submits a backtest and shows its progress to done', async () => {
    const templates = await api<{ data: { id: string; params_schema: { properties: Record<string, unknown> } }[] }>('GET', '/v1/templates')
    await page.click('[data-testid=new-backtest]')
    await page.waitForSelector('[data-testid=backtest-form] select[name=template_id] option', { state: 'attached' })
    const options = await page.$$eval('[data-testid=backtest-form] select[name=template_id] option', (els) => els.map((e) => e.textContent))
    assert.deepEqual(options, templates.data.map((tpl) => tpl.id))
    await page.selectOption('select[name=template_id]', 'rsi_reversion')
    const rsiFields = await page.$$eval('[data-testid=params] [data-param]', (els) => els.map((e) => e.getAttribute('data-param')))
    assert.deepEqual(rsiFields, Object.keys(templates.data.find((tpl) => tpl.id === 'rsi_reversion')!.params_schema.properties))
    await page.selectOption('select[name=template_id]', 'sma_cross')
    await page.fill('[data-param=fast]', '10')
    await page.fill('[data-param=slow]', '30')
    await page.fill('input[name=start]', '2024-01-01')
    await page.fill('input[name=end]', '2024-03-31')
    await page.selectOption('select[name=timeframe]', '1h')
    await page.click('[data-testid=backtest-submit]')
    await page.waitForURL(/\/app\/backtests\/bt_[0-9a-f]+$/)
    first = new URL(page.url()).pathname.split('/').at(-1)!
    const progress = page.locator('[data-testid=backtest-progress]')
    await page.waitForSelector('[data-testid=backtest-progress][data-status=done]', { timeout: 60_000 })
    const seen = (await progress.getAttribute('data-seen'))!.split(',')
    assert.equal(seen[0], 'queued', 'the page starts from the queued job the POST answered')
    assert.equal(seen.at(-1), 'done')
    assert.equal(await progress.getAttribute('data-progress'), '1')
    const job = await apiJob(first)
    assert.equal(job.status, 'done')
    assert.deepEqual(
      (job as unknown as { config: { params: unknown; start: string } }).config.params,
      { fast: 10, slow: 30, allow_short: false },
    )
  })

  it('draws the equity curve with one point per day of the result, the drawdown, trade markers, and the API\'s trades and metrics', async () => {
    const job = await apiJob(first)
    const curve = job.result.equity_curve
    assert.ok(curve.length > 80, `a quarter of days: ${curve.length}`)
    await page.waitForSelector('[data-testid=equity-chart][data-series-lengths]')
    const drawn = await page.$eval('[data-testid=equity-chart]', (el) =>
      (el as unknown as ChartElement).chartSeries[0]!.data().map((p) => [p.time, p.value]),
    )
    assert.deepEqual(drawn, curve.map(([at, equity]) => [Date.parse(at) / 1000, Number(equity)]))
    for (let i = 1; i < curve.length - 1; i++) assert.equal(Date.parse(curve[i]![0]) - Date.parse(curve[i - 1]![0]), 86_400_000, 'one point per day')

    const drawdown = await page.$eval('[data-testid=drawdown-chart]', (el) =>
      (el as unknown as ChartElement).chartSeries[0]!.data().map((p) => p.value),
    )
    assert.equal(drawdown.length, curve.length)
    assert.ok(Math.abs(Math.min(...drawdown) - Number(job.result.metrics.max_drawdown)) < 1e-8, 'the deepest point is the max_drawdown metric')

    for (const [name, value] of Object.entries(job.result.metrics)) {
      assert.equal(await page.getAttribute(`[data-testid=metrics] [data-metric=${name}]`, 'data-value'), value === null ? 'null' : String(value), name)
    }

    const trades = job.result.trades
    assert.ok(trades.length > 0)
    assert.equal(await page.getAttribute('[data-testid=trades]', 'data-trade-count'), String(trades.length))
    const rows: Record<string, string>[] = []
    for (;;) {
      rows.push(
        ...(await page.$$eval('[data-testid=trades-table] tbody tr', (trs) =>
          trs.map((tr) => {
            const d = (tr as unknown as ChartElement).dataset
            return { id: d.tradeId!, side: d.side!, symbol: d.symbol!, entry_time: d.entryTime!, entry_price: d.entryPrice!, exit_time: d.exitTime!, exit_price: d.exitPrice!, qty: d.qty!, fee: d.fee!, pnl: d.pnl! }
          }),
        )),
      )
      const next = await page.$('[data-testid=trades-next]:not([disabled])')
      if (!next) break
      await next.click()
    }
    assert.deepEqual(
      rows,
      trades.map((tr) => ({ id: String(tr.id), side: tr.side, symbol: tr.symbol, entry_time: tr.entry_time, entry_price: tr.entry_price, exit_time: tr.exit_time, exit_price: tr.exit_price, qty: tr.qty, fee: tr.fee, pnl: tr.pnl })),
    )

    await page.waitForSelector('[data-testid=price-chart][data-markers]', { timeout: 20_000 })
    assert.equal(await page.getAttribute('[data-testid=price-chart]', 'data-marked-fills'), String(trades.length * 2), 'an entry and an exit per trade, on the chart')
    const candles = await page.$eval('[data-testid=price-chart]', (el) => (el as unknown as ChartElement).chartSeries[0]!.data().length)
    assert.ok(candles > 500, `1h candles over the quarter: ${candles}`)
  })

  it('stays within a phone\'s width', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    await page.waitForSelector('[data-testid=equity-chart]')
    const width = await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)
    assert.ok(width <= 390, `the page is ${width} px wide on a 390 px screen`)
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  it('compares two runs side by side', async () => {
    const second = (await api<{ id: string }>('POST', '/v1/backtest/jobs', { template_id: 'ema_cross', params: { fast: 12, slow: 26 }, symbols: ['BTCUSDT'], timeframe: '4h', start: '2024-01-01T00:00:00Z', end: '2024-06-30T00:00:00Z', capital: '5000' })).id
    await page.click('header nav a[href="/app/backtests"]')
    await page.waitForSelector(`[data-testid=backtests-table] tr[data-job-id=${second}]`)
    await page.waitForSelector(`[data-testid=backtests-table] tr[data-job-id=${second}][data-status=done]`, { timeout: 60_000 }).catch(async (error: unknown) => {
      throw new Error(`${String(error)}; the API has it ${JSON.stringify((await apiJob(second)).status)}`)
    })
    await page.check(`[data-pick=${first}]`)
    await page.check(`[data-pick=${second}]`)
    await page.click('[data-testid=compare]')
    await page.waitForSelector('[data-testid=compare-chart][data-series-lengths]')
    const jobs = [await apiJob(first), await apiJob(second)]
    for (const job of jobs) {
      for (const [name, value] of Object.entries(job.result.metrics)) {
        assert.equal(await page.getAttribute(`[data-testid=compare-table] tr[data-metric=${name}] td[data-job=${job.id}]`, 'data-value'), String(value), `${job.id} ${name}`)
      }
    }
    assert.equal(await page.getAttribute('[data-testid=compare-chart]', 'data-series-lengths'), jobs.map((j) => j.result.equity_curve.length).join(','))
  })

  let strategyId: string
  it('creates a strategy, deploys it as a dry run, follows its stream and pauses it flat', async () => {
    await page.click('header nav a[href="/app/strategies"]')
    await page.click('[data-testid=new-strategy]')
    await page.waitForSelector('[data-testid=strategy-form] [data-param=fast]')
    await page.fill('[data-testid=strategy-form] input[name=name]', 'fast minute')
    await page.selectOption('[data-testid=strategy-form] select[name=timeframe]', '1m')
    await page.fill('[data-testid=strategy-form] [data-param=fast]', '3')
    await page.fill('[data-testid=strategy-form] [data-param=slow]', '8')
    await page.check('[data-testid=strategy-form] [data-param=allow_short]')
    await page.fill('[data-testid=strategy-form] input[name=capital]', '1000')
    await page.click('[data-testid=strategy-submit]')
    await page.waitForURL(/\/app\/strategies\/strat_[0-9a-f]+$/)
    const id = new URL(page.url()).pathname.split('/').at(-1)!
    strategyId = id
    const stored = await api<{ status: string; params: unknown; timeframe: string }>('GET', `/v1/strategies/${id}`)
    assert.deepEqual([stored.status, stored.params, stored.timeframe], ['draft', { fast: 3, slow: 8, allow_short: true }, '1m'])

    await page.waitForSelector('[data-testid=stream-state][data-state=open]')
    assert.equal(await page.isChecked('[data-testid=mode-dry]'), true, 'dry run is the default')
    assert.equal(await page.getAttribute('[data-testid=strategy] .heading [data-testid=mode]', 'data-mode'), 'none', 'no run yet, no mode')
    await page.click('[data-testid=deploy]')
    await page.waitForSelector('[data-testid=live-status][data-status=deployed]')
    await page.waitForSelector('[data-testid=strategy] .heading [data-testid=mode][data-mode=dry_run]')
    const deployed = await api<{ status: string }>('GET', `/v1/strategies/${id}`)
    assert.equal(deployed.status, 'deployed')
    await page.waitForSelector('[data-testid=stream-log] li[data-type=order]', { timeout: 60_000 })
    await page.waitForSelector('[data-testid=stream-log] li[data-type=position_opened]', { timeout: 30_000 })
    await page.waitForSelector('[data-testid=position][data-open=true]')
    const types = await page.$$eval('[data-testid=stream-log] li', (lis) => lis.map((li) => li.getAttribute('data-type')).reverse())
    assert.equal(types[0], 'status', 'the stream starts with the current status')
    // Entries read as words, the raw data a hover away (issue 24).
    assert.match(await page.innerText('[data-testid=stream-log] li[data-type=order]'), / (Buy|Sell) [\d.]+ BTCUSDT filled at [\d,.]+, fee -?[\d,.]+ USDT$/)
    assert.match(await page.innerText('[data-testid=stream-log] li[data-type=position_opened]'), / Opened (long|short) [\d.]+ BTCUSDT at [\d,.]+$/)
    assert.match((await page.getAttribute('[data-testid=stream-log] li[data-type=order]', 'title'))!, /"client_order_id"/)

    // Every filled order of the stream is in the table, as the API lists it.
    const orders = (await api<{ data: { client_order_id: string; status: string }[] }>('GET', `/v1/strategies/${id}/orders?limit=100`)).data.filter((o) => o.status === 'filled')
    await poll('the filled orders in the table', 10_000, async () => {
      const shown = await page.$$eval('[data-testid=orders-table] tbody tr[data-status=filled]', (trs) => trs.map((tr) => tr.getAttribute('data-order-id')))
      return orders.every((o) => shown.includes(o.client_order_id)) ? true : undefined
    })
    // A fill's time is the exchange's clock (the replay's 2025), the deploy's ours: each cell says which.
    const clocks = await page.$$eval('[data-testid=orders-table] tbody tr[data-status=filled] td:first-child', (tds) => tds.map((td) => td.getAttribute('data-clock')))
    assert.ok(clocks.length > 0 && clocks.every((c) => c === 'exchange'), `filled orders' clocks: ${clocks.join(',')}`)
    assert.match((await page.getAttribute('[data-testid=orders-table] tbody tr[data-status=filled] td:first-child', 'title'))!, /Exchange time/)
    // One clock per column (issue 35): a pending order too shows the exchange's time (its bar's close), and
    // what it will send; the page says where now is on the exchange's clock, the replay's 2025, not ours.
    const rows = await page.$$eval('[data-testid=orders-table] tbody tr', (trs) =>
      trs.map((tr) => ({ status: tr.getAttribute('data-status'), clock: tr.querySelector('td')!.getAttribute('data-clock'), time: tr.querySelector('td')!.textContent })),
    )
    assert.ok(rows.every((r) => r.clock === 'exchange' && r.time!.startsWith('2025-')), JSON.stringify(rows))
    await page.waitForSelector('[data-testid=exchange-clock]')
    const exchangeNow = Number(await page.getAttribute('[data-testid=exchange-clock]', 'data-value'))
    assert.ok(exchangeNow < Date.UTC(2026, 0, 1) && exchangeNow > Date.UTC(2025, 0, 1), `exchange clock ${exchangeNow}`)
    assert.match(await page.innerText('[data-testid=exchange-clock]'), /Exchange time now\s+2025-/)

    await page.click('[data-testid=pause]')
    await page.waitForSelector('[data-testid=live-status][data-status=paused]')
    const paused = await api<{ status: string; stats: { open_positions: number } }>('GET', `/v1/strategies/${id}`)
    assert.equal(paused.status, 'paused')
    assert.equal(paused.stats.open_positions, 0, 'pause closed the position')
    assert.equal(await page.getAttribute('[data-testid=strategy-stats] [data-stat=open_positions]', 'data-value'), '0')
    await page.waitForSelector('[data-testid=stream-log] li[data-type=position_closed]')
    assert.match(await page.innerText('[data-testid=stream-log] li[data-type=position_closed]'), / Closed (long|short) [\d.]+ BTCUSDT at [\d,.]+, entry [\d,.]+: PnL [+-]?[\d,.]+ USDT/)
    // Paused, while the page's connection to the stream stays up: the two read apart.
    assert.equal(await page.innerText('[data-testid=stream-state]'), 'updates: connected')
    await page.waitForSelector('[data-testid=deploy-form]')
  })

  it("shows a running strategy's positions as soon as its page loads (GET positions, with mark and unrealized PnL), its mode in the list", async () => {
    const id = await deployFastDryRun(t, key)
    try {
      const held = await poll('an open position of the dry run', 60_000, async () => {
        const positions = await api<{ symbol: string; qty: string }[]>('GET', `/v1/strategies/${id}/positions`)
        return positions.length > 0 ? positions : undefined
      })
      // The session lives in the page's memory only: the strategy is opened from the list, as a user does.
      await page.click('header nav a[href="/app/strategies"]')
      await page.waitForSelector(`[data-testid=strategies-table] tr[data-strategy-id=${id}] [data-testid=mode][data-mode=dry_run]`)
      await page.click(`[data-testid=strategies-table] tr[data-strategy-id=${id}] a`)
      // A stream message carries no mark: a row with one was read from GET positions.
      const row = await page.waitForSelector('[data-testid=position-row][data-mark]:not([data-mark=""])', { timeout: 10_000 })
      assert.equal(await row.getAttribute('data-symbol'), held[0]!.symbol)
      assert.match((await row.getAttribute('data-mark'))!, /^\d+(\.\d)?$/, 'the mark at the tick of BTCUSDT')
      assert.match((await row.getAttribute('data-pnl'))!, /^-?\d+(\.\d{0,7}[1-9])?$/)
      assert.equal(await page.getAttribute('[data-testid=strategy] .heading [data-testid=mode]', 'data-mode'), 'dry_run')
      const lastBar = await page.getAttribute('[data-testid=strategy-stats] [data-stat=last_bar_at]', 'data-value')
      assert.match(lastBar!, /^\d{4}-\d\d-\d\dT/, 'the last bar the run acted on')
    } finally {
      await api('POST', `/v1/strategies/${id}/pause`, { close_positions: true })
    }
  })

  it('shows why a strategy is in error next to its status, and its edit control moves it back to draft', async () => {
    const id = await deployFastDryRun(t, key)
    const db = t.database.handle.db
    await db.transaction().execute(async (trx) => {
      const run = (await activeRun(trx, id, true))!
      await enterError(trx, run, { code: 'POSITION_MISMATCH', message: 'the exchange holds 0.004 BTCUSDT, the ledger 0.002' }, new Date(t.clock.now()))
    })
    t.services.runSignals.emit('runs-changed')
    await page.click('header nav a[href="/app/strategies"]')
    await page.click(`[data-testid=strategies-table] tr[data-strategy-id=${id}] a`)
    await page.waitForSelector('[data-testid=live-status][data-status=error]')
    const box = await page.waitForSelector('[data-testid=last-error][data-code=POSITION_MISMATCH]')
    assert.match(await box.innerText(), /the exchange holds 0\.004 BTCUSDT, the ledger 0\.002/)
    await page.click('[data-testid=back-to-draft]')
    await page.waitForSelector('[data-testid=live-status][data-status=draft]')
    const stored = await api<{ status: string; last_error: { code: string } | null }>('GET', `/v1/strategies/${id}`)
    assert.equal(stored.status, 'draft')
    assert.equal(stored.last_error?.code, 'POSITION_MISMATCH', 'the reason stays in view until the next deploy')
    assert.equal(await page.$('[data-testid=back-to-draft]'), null, 'a draft has nothing to move back')
    await page.waitForSelector('[data-testid=deploy-form]')
  })

  it('sends a webhook test delivery to a real HTTPS receiver, lists the delivery, pauses and reactivates the webhook', async () => {
    const hook = await api<{ id: string }>('POST', '/v1/webhooks', { url: `${receiver.url}/dashboard`, events: ['strategy.*'] })
    await page.click('header nav a[href="/app/webhooks"]')
    await page.click(`[data-testid=webhooks-table] tr[data-webhook-id=${hook.id}] a`)
    await page.click('[data-testid=test-webhook]')
    const result = await page.waitForSelector('[data-testid=test-result]', { timeout: 15_000 })
    assert.equal(await result.getAttribute('data-delivered'), 'true')
    assert.match((await result.getAttribute('data-status'))!, /^2\d\d$/)
    const eventId = (await result.innerText()).split(':')[0]!
    assert.ok(receiver.received.some((r) => r.headers['webhook-id'] === eventId), 'the receiver got it')
    await page.waitForSelector(`[data-testid=deliveries-table] tr[data-event-id=${eventId}][data-delivered=true]`)

    await page.click('[data-testid=pause-webhook]')
    await page.waitForSelector('[data-testid=webhook-status][data-status=paused]')
    assert.equal((await api<{ status: string }>('GET', `/v1/webhooks/${hook.id}`)).status, 'paused')
    await page.click('[data-testid=reactivate-webhook]')
    await page.waitForSelector('[data-testid=webhook-status][data-status=active]')
    assert.equal((await api<{ status: string }>('GET', `/v1/webhooks/${hook.id}`)).status, 'active')
  })

  it('shows the market: every funding rate the API has, a page at a time', async () => {
    const ratesResponse = await fetch(`${base}/funding/rates`)
    const rates = (await ratesResponse.json()) as unknown[]
    assert.equal(ratesResponse.status, 200, JSON.stringify(rates))
    await page.click('header nav a[href="/app/market"]')
    await page.waitForSelector('[data-testid=funding-table] tbody tr')
    // Fifty rows a page; the pages together hold every symbol once.
    const symbols = new Set<string>()
    for (;;) {
      const onPage = await page.$$eval('[data-testid=funding-table] tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-symbol')!))
      assert.ok(onPage.length <= 50, `${onPage.length} rows on one page`)
      for (const symbol of onPage) symbols.add(symbol)
      const next = page.locator('[data-testid=funding-next]')
      if ((await next.count()) === 0 || (await next.isDisabled())) break
      await next.click()
      await page.waitForFunction(`document.querySelector('[data-testid=funding-table] tbody tr')?.getAttribute('data-symbol') !== ${JSON.stringify(onPage[0])}`)
    }
    assert.equal(symbols.size, rates.length)
    // Annualised with each symbol's own interval: DIAUSDT funds every 4 h on the replay exchange, BTCUSDT every 8 h.
    // The replay's rates move while the page loads: the page's figure is compared with the API's answer read
    // just before and just after the page's own read, and must equal one of them.
    type Rate = { symbol: string; fundingRate: string; annualizedRate: string }
    const shown = (rows: Rate[], symbol: string) => `${(Number(rows.find((r) => r.symbol === symbol)!.annualizedRate) * 100).toFixed(1)} %`
    for (const [symbol, hours] of [['DIAUSDT', 4], ['BTCUSDT', 8]] as const) {
      const row = (rates as Rate[]).find((r) => r.symbol === symbol)!
      assert.ok(Math.abs(Number(row.annualizedRate) - (Number(row.fundingRate) * 365 * 24) / hours) < 1e-8)
      await page.fill('input[aria-label="Filter symbols"]', symbol)
      const interval = page.locator(`[data-testid=funding-table] tr[data-symbol=${symbol}] td[data-interval-hours]`)
      assert.equal(await interval.getAttribute('data-interval-hours'), String(hours))
      assert.equal(await interval.innerText(), `${hours} h`, 'the interval beside the annualised rate')
      const cell = page.locator(`[data-testid=funding-table] tr[data-symbol=${symbol}] td[data-key=annualized]`)
      const after = (await (await fetch(`${base}/funding/rates`)).json()) as Rate[]
      assert.ok([shown(rates as Rate[], symbol), shown(after, symbol)].includes(await cell.innerText()), `${symbol}: ${await cell.innerText()}`)
    }
    await page.click('[data-tab=whales]')
    await page.waitForSelector('[data-testid=whale-table]', { timeout: 20_000 })
  })

  it('signs in with an API key and secret, signing every request in the browser (WebCrypto, through the typed client)', async () => {
    const keyPage = await browser.newPage()
    keyPage.on('pageerror', (error) => pageErrors.push(error.message))
    try {
      await keyPage.goto(`${base}/app/backtests/${first}`)
      await keyPage.click('[data-testid=mode-key]')
      await keyPage.fill('input[name=api_key]', key.api_key)
      await keyPage.fill('input[name=api_secret]', `${key.api_secret}x`)
      await keyPage.click('[data-testid=sign-in-submit]')
      assert.match(await (await keyPage.waitForSelector('[data-testid=error]')).innerText(), /signature/i, 'a wrong secret is refused with the API\'s message')
      await keyPage.fill('input[name=api_secret]', key.api_secret)
      await keyPage.click('[data-testid=sign-in-submit]')
      // The deep link survives sign-in: the signed GET of the job draws its curve.
      await keyPage.waitForSelector('[data-testid=equity-chart][data-series-lengths]')
      assert.equal(await keyPage.getAttribute('[data-testid=backtest]', 'data-job-id'), first)
      // A signed POST: the stream ticket of the strategy page.
      await keyPage.click('header nav a[href="/app/strategies"]')
      await keyPage.click(`[data-testid=strategies-table] tr[data-strategy-id=${strategyId}] a`)
      await keyPage.waitForSelector('[data-testid=stream-state][data-state=open]')
      await keyPage.waitForSelector('[data-testid=stream-log] li[data-type=status]')
      assert.equal(await keyPage.getAttribute('[data-testid=live-status]', 'data-status'), 'paused')
    } finally {
      await keyPage.close()
    }
  })

  it('raised no page error and no Content-Security-Policy refusal', () => {
    assert.deepEqual(pageErrors, [])
  })
})
