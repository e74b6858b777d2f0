import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { BrowserContext, Page } from 'playwright-core'
import { type HttpsReceiver, startHttpsReceiver, testCertificates } from '../support/https-receiver.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'
import { browserMissing } from './browser.js'
import { type DashboardApp, startDashboardApp } from './dashboard-app.js'

/**
 * The dashboard at a laptop's 1280 px and a phone's 390 px (issue 24): key columns in sight, charts
 * that fit the run and follow a resize, a long run's price chart, units and tick-aligned prices, the
 * tab's session across reloads. Layout is asserted from the browser's own boxes, not screenshots.
 */
const SCOPES = ['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write', 'webhooks:read', 'webhooks:write', 'market:read'] as const
const PHONE = { width: 390, height: 844 }
const LAPTOP = { width: 1280, height: 900 }
const TOKEN_KEY = 'perpetua.appToken'

interface Box {
  text: string
  left: number
  right: number
  width: number
}

interface ApiJob {
  id: string
  status: string
  config: { capital: string }
  result: { final_equity: string; metrics: Record<string, unknown>; equity_curve: [string, string][]; trades: { entry_price: string; pnl: string }[] }
}

/** Each matching element's text and horizontal box, in CSS pixels of the viewport. */
const boxes = (page: Page, selector: string): Promise<Box[]> =>
  page.$$eval(selector, (els) =>
    els.map((el) => {
      const r = (el as unknown as { getBoundingClientRect(): { left: number; right: number; width: number } }).getBoundingClientRect()
      return { text: (el as unknown as { textContent: string }).textContent.trim(), left: r.left, right: r.right, width: r.width }
    }),
  )

function assertInView(found: Box[], viewport: number, what: string): void {
  assert.ok(found.length > 0, `${what}: nothing found`)
  for (const box of found) {
    assert.ok(box.width > 0, `${what} "${box.text}" is hidden`)
    assert.ok(box.left >= 0 && box.right <= viewport + 0.5, `${what} "${box.text}" spans ${Math.round(box.left)}–${Math.round(box.right)} px of a ${viewport} px screen`)
  }
}

/** What every chart container exposes (web/src/charts/chart-host.ts), measured in the page. */
interface ChartFacts {
  id: string
  container: number
  drawn: number
  points: number
  from: number
  to: number
}

const chartFacts = (page: Page): Promise<ChartFacts[]> =>
  page.evaluate(`[...document.querySelectorAll('.chart')].filter((el) => el.chart).map((el) => {
    const range = el.chart.timeScale().getVisibleLogicalRange()
    return {
      id: el.dataset.testid,
      container: el.clientWidth,
      drawn: el.querySelector('.tv-lightweight-charts').getBoundingClientRect().width,
      points: el.chartSeries[0].data().length,
      from: range ? range.from : NaN,
      to: range ? range.to : NaN,
    }
  })`)

/**
 * The page's charts once all three are drawn at their container's width, which `wanted` accepts, each
 * showing its whole series (a chart made anew fits its run on the next frame, so this is waited for too;
 * a chart that never fits fails the poll, and assertChartsFit then names it).
 */
const chartsAt = async (page: Page, what: string, wanted: (width: number) => boolean): Promise<ChartFacts[]> => {
  const fits = (f: ChartFacts) => wanted(f.container) && Math.abs(f.drawn - f.container) <= 1 && f.from <= 0.5 && f.to >= f.points - 1.5
  try {
    return await poll(what, 10_000, async () => {
      const facts = await chartFacts(page)
      return facts.length >= 3 && facts.every(fits) ? facts : undefined
    })
  } catch {
    return chartFacts(page)
  }
}

/** Every chart is drawn at its container's width and shows its whole series. */
function assertChartsFit(facts: ChartFacts[], width: string): void {
  assert.ok(facts.length >= 3, `charts on the page: ${facts.map((f) => f.id).join(', ')}`)
  for (const f of facts) {
    assert.ok(Math.abs(f.drawn - f.container) <= 1, `${width}: ${f.id} is drawn ${f.drawn} px wide in a ${f.container} px container`)
    assert.ok(f.from <= 0.5 && f.to >= f.points - 1.5, `${width}: ${f.id} shows bars ${f.from}–${f.to} of ${f.points}`)
  }
}

const skip = browserMissing()

describe('dashboard at 1280 and 390 px (pglite, replay exchange)', { skip }, () => {
  let d: DashboardApp
  let base: string
  let key: KeyPair
  let token: string
  let browser: BrowserContext
  let page: Page
  let receiver: HttpsReceiver
  let long: ApiJob
  let short: ApiJob

  const api = <T>(method: string, url: string, body?: unknown): Promise<T> => d.api<T>(method, url, body)
  /** Submits a backtest and waits for it to finish (through the list: one job may be read once per 5 s). */
  const backtest = async (body: Record<string, unknown>): Promise<ApiJob> => {
    const { id } = await api<{ id: string }>('POST', '/v1/backtest/jobs', { symbols: ['BTCUSDT'], capital: '10000', ...body })
    await poll(`backtest ${id} done`, 120_000, async () => {
      const list = await api<{ data: { id: string; status: string }[] }>('GET', '/v1/backtest/jobs?limit=20')
      const status = list.data.find((j) => j.id === id)?.status
      assert.notEqual(status, 'failed', `backtest ${id} failed`)
      return status === 'done' ? true : undefined
    })
    return d.apiJob<ApiJob>(id)
  }
  /**
   * Opens a backtest through the app's own links, as a user does: a finished job read once stays in
   * the page's memory, where a reload would read it again and meet the once-per-5-s limit (a 429 the
   * page waits out, but which the browser logs as a console error).
   */
  const openBacktest = async (id: string) => {
    await page.click('header nav a[href="/app/backtests"]')
    await page.click(`[data-testid=backtests-table] tr[data-job-id=${id}] a`)
    await page.waitForSelector(`[data-testid=backtest][data-job-id=${id}]`)
  }
  const signInWithToken = async (target: Page) => {
    await target.fill('textarea[name=token]', token)
    await target.click('[data-testid=sign-in-submit]')
  }

  before(async () => {
    receiver = await startHttpsReceiver()
    d = await startDashboardApp([...SCOPES], 'phone@example.test', { WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: testCertificates().caFile }, { config: { webhookTimeoutMs: 2000 } })
    base = d.base
    key = d.key
    token = d.token
    browser = d.browser
    page = d.page
    // Three years of hours (issue 24's 526 trades) and half a year of 4 h bars.
    long = await backtest({ template_id: 'sma_cross', params: { fast: 10, slow: 30 }, timeframe: '1h', start: '2022-01-01T00:00:00Z', end: '2024-12-31T00:00:00Z' })
    short = await backtest({ template_id: 'ema_cross', params: { fast: 12, slow: 26 }, timeframe: '4h', start: '2024-01-01T00:00:00Z', end: '2024-06-30T00:00:00Z', capital: '5000' })
    // The page reads each job once too, and one job may be read once per 5 s: its first read must come
    // after this one's window, or it meets a 429 (waited out, but logged by the browser as an error).
    const readAt = Date.now()
    await poll('the jobs\' 5 s read window', 6_000, () => (Date.now() - readAt > 5_100 ? true : undefined))
  })
  after(async () => {
    await d?.close()
    await receiver?.close()
  })

  it('the sign-in hints break between words only, at 390 px', async () => {
    await page.setViewportSize(PHONE)
    await page.goto(`${base}/app/backtests`)
    for (const mode of ['token', 'key']) {
      await page.click(`[data-testid=mode-${mode}]`)
      // Each word of each command must sit on one line: a Range over it has one line box.
      const split = await page.evaluate<string[]>(`(() => {
        const split = []
        for (const code of document.querySelectorAll('.hint code')) {
          const node = document.createTreeWalker(code, NodeFilter.SHOW_TEXT)
          let text
          while ((text = node.nextNode())) {
            for (const match of text.data.matchAll(/[^\\s,]+/g)) {
              const range = document.createRange()
              range.setStart(text, match.index)
              range.setEnd(text, match.index + match[0].length)
              const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)))
              if (tops.size > 1) split.push(match[0])
            }
          }
        }
        return split
      })()`)
      assert.deepEqual(split, [], `${mode}: words broken across lines`)
    }
    assertInView(await boxes(page, '.hint code'), PHONE.width, 'hint')
  })

  it('keeps an app token (never the API secret) for the tab: a reload stays signed in, sign-out clears it', async () => {
    await page.click('[data-testid=mode-token]')
    await signInWithToken(page)
    await page.waitForSelector('[data-testid=backtests-table]')
    assert.equal(await page.evaluate<string | null>(`sessionStorage.getItem('${TOKEN_KEY}')`), token)
    assert.equal(await page.evaluate<number>('localStorage.length'), 0, 'nothing in localStorage')
    await page.reload()
    await page.waitForSelector('[data-testid=backtests-table]')
    assert.equal(await page.$('[data-testid=sign-in]'), null, 'the reload kept the session')

    await page.click('[data-testid=sign-out]')
    await page.waitForSelector('[data-testid=sign-in]')
    assert.equal(await page.evaluate<string | null>(`sessionStorage.getItem('${TOKEN_KEY}')`), null, 'sign-out cleared the token')
    await page.reload()
    await page.waitForSelector('[data-testid=sign-in]')

    // An API key session keeps nothing: the secret is never written to any storage.
    await page.click('[data-testid=mode-key]')
    await page.fill('input[name=api_key]', key.api_key)
    await page.fill('input[name=api_secret]', key.api_secret)
    await page.click('[data-testid=sign-in-submit]')
    await page.waitForSelector('[data-testid=backtests-table]')
    const stored = await page.evaluate<string>('JSON.stringify([Object.entries(sessionStorage), Object.entries(localStorage), document.cookie])')
    assert.ok(!stored.includes(key.api_secret), 'the secret is in no storage')
    assert.equal(await page.evaluate<string | null>(`sessionStorage.getItem('${TOKEN_KEY}')`), null)
    await page.reload()
    await page.waitForSelector('[data-testid=sign-in]')
    await page.click('[data-testid=mode-token]')
    await signInWithToken(page)
    await page.waitForSelector('[data-testid=backtests-table]')
  })

  it('a kept token the API refuses signs the tab out', async () => {
    const other = await browser.newPage()
    try {
      await other.goto(`${base}/app/market`)
      await other.evaluate(`sessionStorage.setItem('${TOKEN_KEY}', 'expired.token.value')`)
      await other.goto(`${base}/app/backtests`)
      await other.waitForSelector('[data-testid=sign-in]')
      assert.equal(await other.evaluate<string | null>(`sessionStorage.getItem('${TOKEN_KEY}')`), null)
    } finally {
      await other.close()
    }
  })

  it('the backtest list keeps CAGR, Sharpe and drawdown in sight at 390 px, and every column at 1280 px', async () => {
    await page.goto(`${base}/app/backtests`)
    await page.waitForSelector(`[data-testid=backtests-table] tr[data-job-id=${long.id}]`)
    const keyCells = '[data-testid=backtests-table] th[data-key]'
    assert.deepEqual((await boxes(page, keyCells)).map((b) => b.text), ['CAGR', 'Sharpe', 'Max DD'])
    assertInView(await boxes(page, keyCells), PHONE.width, 'phone')
    for (const column of [8, 9, 10]) assertInView(await boxes(page, `[data-testid=backtests-table] tbody td:nth-child(${column})`), PHONE.width, `phone column ${column}`)
    assert.ok((await page.evaluate<number>('document.documentElement.scrollWidth')) <= PHONE.width)
    await page.setViewportSize(LAPTOP)
    assertInView(await boxes(page, '[data-testid=backtests-table] thead th:not(:first-child)'), LAPTOP.width, 'laptop')
    await page.setViewportSize(PHONE)
  })

  it('a result at 390 px: PnL in sight, money in USDT, funding signed, prices to the tick, charts fit the run and follow a resize', async () => {
    await openBacktest(short.id)
    await page.waitForSelector('[data-testid=price-chart][data-markers]', { timeout: 20_000 })
    assert.ok((await page.evaluate<number>('document.documentElement.scrollWidth')) <= PHONE.width)
    assertInView(await boxes(page, '[data-testid=trades-table] th[data-key=pnl]'), PHONE.width, 'PnL header')
    const pnl = await boxes(page, '[data-testid=trades-table] tbody td:nth-child(11)')
    assertInView(pnl, PHONE.width, 'PnL')
    assert.equal(pnl.length, short.result.trades.length)

    assert.match(await page.innerText('[data-testid=final-equity]'), /^[\d,]+\.\d\d USDT$/)
    assert.match(await page.innerText('[data-testid=fees-paid]'), / USDT$/)
    assert.match(await page.innerText('[data-testid=funding-paid]'), / USDT$/)
    assert.match(await page.innerText('.facts div:has([data-testid=funding-paid]) dt'), /\+ paid/)
    assert.match(await page.innerText('[data-testid=metrics] [data-metric=expected_value] dd'), / USDT$/)
    // BTCUSDT's tick is 0.10: every entry price has one decimal, as the exchange info says.
    const info = await (await fetch(`${base}/v1/market/exchange-info?symbol=BTCUSDT`)).json() as { symbols: { filters: { filterType: string; tickSize?: string }[] }[] }
    const tick = info.symbols[0]!.filters.find((f) => f.filterType === 'PRICE_FILTER')!.tickSize!
    const decimals = tick.split('.')[1]?.replace(/0+$/, '').length ?? 0
    await page.setViewportSize(LAPTOP)
    await poll('prices to the tick', 5_000, async () => {
      const prices = await page.$$eval('[data-testid=trades-table] tbody td:nth-child(5)', (tds) => tds.map((td) => (td as unknown as { textContent: string }).textContent))
      return prices.length > 0 && prices.every((p) => new RegExp(`^[\\d,]+\\.\\d{${decimals}}$`).test(p)) ? true : undefined
    })
    await page.setViewportSize(PHONE)

    // A phone draws the half-year of 4 h bars as daily candles (≤ 1.5 a pixel); a laptop as 4 h.
    const candles = () => page.$$eval('[data-testid=price-chart]', (els) => (els[0] as unknown as { chartSeries?: { data(): unknown[] }[] } | undefined)?.chartSeries?.[0]?.data().length ?? 0)
    const phoneCandles = await poll('at most 1.5 candles a pixel on the phone', 10_000, async () => {
      const n = await candles()
      return n > 0 && n <= PHONE.width * 1.5 ? n : undefined
    })
    assertChartsFit(await chartsAt(page, 'charts at 390 px', (w) => w < PHONE.width), '390 px')
    await page.setViewportSize(LAPTOP)
    const laptopCandles = await poll('4 h candles at 1280 px', 10_000, async () => {
      const n = await candles()
      return n > 1000 ? n : undefined
    })
    assert.ok(phoneCandles * 3 < laptopCandles, `candles: ${phoneCandles} on the phone, ${laptopCandles} on the laptop`)
    assertChartsFit(await chartsAt(page, 'charts redrawn at 1280 px', (w) => w > 1000), '1280 px')
    await page.setViewportSize(PHONE)
    assertChartsFit(await chartsAt(page, 'charts redrawn at 390 px again', (w) => w < PHONE.width), '390 px again')
  })

  it('a 3-year run\'s price chart: grouped markers for all 1000+ fills, an axis fitted to the candles, single trades when zoomed in', async () => {
    await page.setViewportSize(LAPTOP)
    await openBacktest(long.id)
    await page.waitForSelector('[data-testid=price-chart][data-markers]', { timeout: 20_000 })
    const trades = long.result.trades.length
    assert.ok(trades > 400, `a long run trades often: ${trades}`)
    // The prices at the pane's bottom and top edges: what the axis shows, margins included.
    const facts = await page.evaluate<{ markers: { text?: string }[]; low: number; high: number; from: number; to: number; width: number }>(`(() => {
      const el = document.querySelector('[data-testid=price-chart]')
      const series = el.chartSeries[0]
      const bars = series.data()
      const pane = el.chart.paneSize()
      return { markers: el.chartMarkers, low: Math.min(...bars.map((b) => b.low)), high: Math.max(...bars.map((b) => b.high)), from: series.coordinateToPrice(pane.height), to: series.coordinateToPrice(0), width: el.chart.timeScale().width() }
    })()`)
    assert.equal(await page.getAttribute('[data-testid=price-chart]', 'data-marked-fills'), String(trades * 2), 'every entry and exit is on the chart')
    const counted = facts.markers.reduce((sum, m) => sum + (m.text && /^\d+$/.test(m.text) ? Number(m.text) : 1), 0)
    assert.equal(counted, trades * 2, 'the groups add up to every fill')
    // At most one group of each of 4 kinds per 20 px: the markers never pile up.
    assert.ok(facts.markers.length <= (facts.width / 20 + 1) * 4, `${facts.markers.length} markers on ${facts.width} px`)
    assert.ok(facts.markers.length < trades, 'grouped')
    // 15,443 to 108,367 over the three years: the axis keeps within a sixth of the span beyond them (not down to 0).
    const span = facts.high - facts.low
    assert.ok(facts.from <= facts.low && facts.from > facts.low - span / 6, `the axis starts at ${facts.from}, the lowest low is ${facts.low}`)
    assert.ok(facts.to >= facts.high && facts.to < facts.high + span / 6, `the axis ends at ${facts.to}, the highest high is ${facts.high}`)

    // Zoomed in to a month of daily candles, every fill has its own marker again.
    await page.evaluate(`(() => { const el = document.querySelector('[data-testid=price-chart]'); const n = el.chartSeries[0].data().length; el.chart.timeScale().setVisibleLogicalRange({ from: n - 30, to: n - 1 }) })()`)
    await page.waitForSelector('[data-testid=price-chart][data-bars-per-marker="1"]')

    await page.evaluate(`document.querySelector('[data-testid=price-chart]').chart.timeScale().fitContent()`)
    await page.setViewportSize(PHONE)
    assertChartsFit(await chartsAt(page, 'charts at 390 px', (w) => w < PHONE.width), '390 px, 3 years')
  })

  it('compares both runs in sight at 390 px, money formatted as on the result page', async () => {
    await page.click('header nav a[href="/app/backtests"]')
    await page.check(`[data-pick=${long.id}]`)
    await page.check(`[data-pick=${short.id}]`)
    await page.click('[data-testid=compare]')
    await page.waitForSelector('[data-testid=compare-chart][data-series-lengths]')
    assertInView(await boxes(page, '[data-testid=compare-table] thead th[data-job]'), PHONE.width, 'run')
    assertInView(await boxes(page, '[data-testid=compare-table] tr[data-metric=sharpe] td'), PHONE.width, 'Sharpe')
    assert.ok((await page.evaluate<number>('document.documentElement.scrollWidth')) <= PHONE.width)
    const equity = await page.innerText(`[data-testid=compare-table] tr[data-row="Final equity"] td[data-job=${short.id}]`)
    const capital = await page.innerText(`[data-testid=compare-table] tr[data-row=Capital] td[data-job=${short.id}]`)
    assert.equal(capital, '5,000.00 USDT')
    await page.click(`[data-testid=compare-table] thead th[data-job=${short.id}] a`)
    assert.equal(await (await page.waitForSelector('[data-testid=final-equity]')).innerText(), equity, 'the same text on both pages')
  })

  it('webhook deliveries keep their result in sight at 390 px', async () => {
    const hook = await api<{ id: string }>('POST', '/v1/webhooks', { url: `${receiver.url}/phone`, events: ['strategy.*'] })
    await page.goto(`${base}/app/webhooks/${hook.id}`)
    await page.click('[data-testid=test-webhook]')
    await page.waitForSelector('[data-testid=deliveries-table] tbody tr[data-delivered=true]', { timeout: 15_000 })
    assertInView(await boxes(page, '[data-testid=deliveries-table] th[data-key=result]'), PHONE.width, 'Result header')
    const results = await boxes(page, '[data-testid=deliveries-table] tbody td:nth-child(5)')
    assertInView(results, PHONE.width, 'result')
    assert.match(results[0]!.text, /^delivered · HTTP 2\d\d$/)
  })

  it('a strategy page tells the stream connection from the strategy\'s status, in words, with both clocks named', async () => {
    const strategy = await api<{ id: string }>('POST', '/v1/strategies', { name: 'phone', template_id: 'sma_cross', params: { fast: 3, slow: 8 }, symbols: ['BTCUSDT'], timeframe: '1m', capital: '1000' })
    await page.goto(`${base}/app/strategies/${strategy.id}`)
    await page.waitForSelector('[data-testid=stream-state][data-state=open]')
    const indicator = await page.innerText('[data-testid=stream-state]')
    assert.doesNotMatch(indicator, /\blive\b/i, 'the connection never says "live"')
    assert.match(indicator, /updates/)
    const dot = await page.evaluate<string>(`getComputedStyle(document.querySelector('[data-testid=stream-state]'), '::before').color`)
    assert.notEqual(dot, 'rgb(19, 138, 85)', 'not the gain green of a running status')
    const status = await (await page.waitForSelector('[data-testid=stream-log] li[data-type=status]')).innerText()
    assert.match(status, /Strategy draft · PnL [\d.,-]+ USDT · 0 open/)
    assert.doesNotMatch(status, /[{}"]/, 'no raw JSON')
    assert.match((await page.getAttribute('[data-testid=strategy-stats] [data-clock=server]', 'title'))!, /server's clock/)
    assert.match((await page.getAttribute('[data-testid=orders-table] th[data-clock=exchange]', 'title'))!, /Exchange time/)
    assertInView(await boxes(page, '[data-testid=strategy-trades] th[data-key=pnl]'), PHONE.width, 'strategy PnL header')
    await page.click('header nav a[href="/app/strategies"]')
    await page.waitForSelector(`[data-testid=strategies-table] tr[data-strategy-id=${strategy.id}]`)
    assertInView(await boxes(page, '[data-testid=strategies-table] th[data-key=pnl]'), PHONE.width, 'strategy list PnL header')
  })

  it('raised no console error or page error', () => {
    assert.deepEqual(d.consoleErrors, [])
  })
})
