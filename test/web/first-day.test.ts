import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { poll } from '../support/poll.js'
import { browserMissing } from './browser.js'
import { type DashboardApp, startDashboardApp } from './dashboard-app.js'

/**
 * A trader's first day (issue 35), in Chromium at 1280 and 390 px: the dashboard acts instead of citing
 * the API (a failed backtest is edited and run again from its page, its coverage shown there); a result
 * shows net profit, total return, fees over gross profit, a buy-and-hold line, a trades CSV, units and
 * axes written like the cards; on a phone the backtests list keeps what ran in sight and the market's
 * tables fit, a page at a time, with each symbol's funding interval.
 */
const SCOPES = ['backtests:read', 'backtests:write', 'strategies:read', 'market:read'] as const
const PHONE = { width: 390, height: 844 }
const LAPTOP = { width: 1280, height: 900 }
const API_ADVICE = /\b(?:GET|POST|PUT|PATCH|DELETE) \/v1/

interface ApiTrade {
  [field: string]: string | number | undefined
  symbol: string
  qty: string
}
interface ApiJob {
  id: string
  status: string
  config: { template_id: string; params: Record<string, number>; symbols: string[]; timeframe: string; start: string; end: string; capital: string; fee_model: string; fee_bps?: string; leverage: number }
  error?: { code: string; message: string }
  result: { final_equity: string; fees_paid: string; trades: ApiTrade[] }
}
interface Box {
  text: string
  left: number
  right: number
  width: number
}

const boxes = (page: Page, selector: string): Promise<Box[]> =>
  page.$$eval(selector, (els) =>
    els.map((el) => {
      const r = el.getBoundingClientRect()
      return { text: (el.textContent ?? '').trim(), left: r.left, right: r.right, width: r.width }
    }),
  )

function assertInView(found: Box[], viewport: number, what: string): void {
  assert.ok(found.length > 0, `${what}: nothing found`)
  for (const box of found) {
    assert.ok(box.width > 0, `${what} "${box.text}" is hidden`)
    assert.ok(box.left >= 0 && box.right <= viewport + 0.5, `${what} "${box.text}" spans ${Math.round(box.left)}–${Math.round(box.right)} px of a ${viewport} px screen`)
  }
}

/** Money as the cards write it (web/src/format.ts's money), computed here from the API's decimals. */
const usdt = (n: number) => `${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} USDT`
const percent = (n: number, digits = 2) => `${(n * 100).toFixed(digits)} %`

const skip = browserMissing()

describe("a trader's first day in headless Chromium (pglite, replay exchange)", { skip }, () => {
  let d: DashboardApp
  let page: Page
  let done: ApiJob
  let failed: ApiJob

  const submit = async (body: Record<string, unknown>, wanted: string): Promise<ApiJob> => {
    const { id } = await d.api<{ id: string }>('POST', '/v1/backtest/jobs', { symbols: ['BTCUSDT'], capital: '10000', ...body })
    await poll(`backtest ${id} ${wanted}`, 120_000, async () => {
      const list = await d.api<{ data: { id: string; status: string }[] }>('GET', '/v1/backtest/jobs?limit=20')
      return list.data.find((j) => j.id === id)?.status === wanted ? true : undefined
    })
    return d.apiJob<ApiJob>(id)
  }
  const openBacktest = async (id: string) => {
    await page.click('header nav a[href="/app/backtests"]')
    await page.click(`[data-testid=backtests-table] tr[data-job-id=${id}] a`)
    await page.waitForSelector(`[data-testid=backtest][data-job-id=${id}]`)
  }

  before(async () => {
    d = await startDashboardApp([...SCOPES], 'first-day@example.test')
    page = d.page
    // Four months of hours with fast averages: a few hundred trades, more than one page of the table.
    done = await submit({ template_id: 'sma_cross', params: { fast: 3, slow: 8 }, timeframe: '1h', start: '2024-01-01T00:00:00Z', end: '2024-04-30T00:00:00Z' }, 'done')
    failed = await submit({ template_id: 'sma_cross', params: { fast: 4, slow: 9 }, timeframe: '1h', start: '2015-01-01T00:00:00Z', end: '2015-01-31T00:00:00Z' }, 'failed')
    // One job may be read once per 5 s: the page's first reads come after the test's own.
    const readAt = Date.now()
    await poll("the jobs' 5 s read window", 6_000, () => (Date.now() - readAt > 5_100 ? true : undefined))
    await page.setViewportSize(PHONE)
    await d.signIn('/app/backtests', '[data-testid=backtests-table]')
  })
  after(async () => {
    await d?.close()
  })

  it('no built page tells its user to call the API', async () => {
    const html = await (await fetch(`${d.base}/app/`)).text()
    const assets = [...html.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => m[1]!)
    assert.ok(assets.some((a) => a.endsWith('.js')), `scripts in ${html}`)
    // The app's chunks too: every file the entry script imports.
    const seen = new Set<string>()
    const queue = assets.map((a) => new URL(a, `${d.base}/app/`).href)
    while (queue.length > 0) {
      const url = queue.shift()!
      if (seen.has(url)) continue
      seen.add(url)
      const text = await (await fetch(url)).text()
      const advice = text.match(new RegExp(`.{0,60}${API_ADVICE.source}.{0,60}`))
      assert.equal(advice, null, `${url} cites the API: ${advice?.[0]}`)
      for (const m of text.matchAll(/from\s*"(\.\/[^"]+\.js)"|import\("(\.\/[^"]+\.js)"\)/g)) queue.push(new URL((m[1] ?? m[2])!, url).href)
    }
    assert.ok(seen.size >= 2, `read ${[...seen].join(', ')}`)
  })

  it('a failed backtest shows its coverage (not the API that tells it) and is edited and run again from its page, at 390 px', async () => {
    assert.equal(failed.error?.code, 'NO_DATA')
    assert.match(failed.error!.message, API_ADVICE, 'the API itself still tells its callers')
    const coverage = await d.api<{ start: string; end: string }>('GET', '/v1/backtest/coverage?symbol=BTCUSDT&timeframe=1h')
    await openBacktest(failed.id)
    const error = await page.innerText('[data-testid=job-error]')
    assert.match(error, /^NO_DATA: no BTCUSDT 1h bars/)
    assert.doesNotMatch(await page.innerText('main'), API_ADVICE)
    const hint = await page.waitForSelector('[data-testid=coverage][data-state=outside]')
    assert.equal(await hint.getAttribute('data-start'), coverage.start.slice(0, 10))
    assert.equal(await hint.getAttribute('data-end'), coverage.end.slice(0, 10))
    assertInView(await boxes(page, '[data-testid=edit-again]'), PHONE.width, 'Edit and run again')
    assert.equal(await page.$('[data-testid=save-strategy]'), null)

    // The form opens filled with the failed job's configuration.
    await page.click('[data-testid=edit-again]')
    await page.waitForSelector('[data-testid=backtest-form] [data-param=fast]')
    assert.equal(await page.inputValue('[data-param=fast]'), '4')
    assert.equal(await page.inputValue('[data-param=slow]'), '9')
    assert.equal(await page.inputValue('select[name=timeframe]'), '1h')
    assert.equal(await page.inputValue('input[name=start]'), '2015-01-01')
    assert.equal(await page.inputValue('input[name=end]'), '2015-01-31')
    assert.equal(await page.inputValue('input[name=capital]'), failed.config.capital)

    // Its coverage's "Use …" opens the same form on the recorded dates; submitted, it runs the same configuration there.
    await openBacktest(failed.id)
    await page.click('[data-testid=fit-dates]')
    await page.waitForSelector('[data-testid=backtest-form] [data-param=fast]')
    // As many days as the failed run asked (30), from the first recorded day.
    const fitStart = coverage.start.slice(0, 10)
    const fitEnd = new Date(Date.parse(`${fitStart}T00:00:00Z`) + 30 * 86_400_000).toISOString().slice(0, 10)
    assert.equal(await page.inputValue('input[name=start]'), fitStart)
    assert.equal(await page.inputValue('input[name=end]'), fitEnd)
    assert.equal(await page.inputValue('[data-param=fast]'), '4')
    await page.click('[data-testid=backtest-submit]')
    await page.waitForSelector('[data-testid=backtest], [data-testid=backtest-form] [data-testid=error], [data-testid=backtest-form] .error')
    assert.equal(await page.$('[data-testid=backtest-form] [data-testid=error]'), null, await page.innerText('[data-testid=backtest-form] [data-testid=error]').catch(() => ''))
    await page.waitForURL(/\/app\/backtests\/bt_[0-9a-f]+$/)
    const again = new URL(page.url()).pathname.split('/').at(-1)!
    assert.notEqual(again, failed.id)
    const list = await d.api<{ data: ApiJob[] }>('GET', '/v1/backtest/jobs?limit=20')
    const config = list.data.find((j) => j.id === again)!.config
    const { start, end, ...rest } = config
    const { start: _s, end: _e, ...before } = failed.config
    assert.deepEqual(rest, before, 'the same configuration')
    assert.equal(Date.parse(start), Date.parse(`${fitStart}T00:00:00Z`))
    assert.equal(Date.parse(end), Date.parse(`${fitEnd}T23:59:59Z`))
  })

  it('a result shows net profit, total return and fees over gross profit, from the API\'s figures, in sight at 390 and 1280 px', async () => {
    await openBacktest(done.id)
    await page.waitForSelector('[data-testid=net-profit]')
    const capital = Number(done.config.capital)
    const net = Number(done.result.final_equity) - capital
    const fees = Number(done.result.fees_paid)
    assert.equal(await page.innerText('[data-testid=net-profit]'), usdt(net))
    assert.equal(await page.innerText('[data-testid=total-return]'), percent(net / capital))
    assert.equal(await page.innerText('[data-testid=fee-share]'), net + fees > 0 ? percent(fees / (net + fees), 1) : 'no gross profit')
    for (const viewport of [PHONE, LAPTOP]) {
      await page.setViewportSize(viewport)
      assertInView(await boxes(page, '[data-testid=net-profit], [data-testid=total-return], [data-testid=fee-share]'), viewport.width, `${viewport.width} px`)
    }
    await page.setViewportSize(PHONE)
  })

  it('the equity chart has a buy-and-hold line ending at capital × last close / first close of the same daily bars, axes written like the cards', async () => {
    const start = Date.parse(done.config.start)
    const end = Date.parse(done.config.end)
    const klines = (await (await fetch(`${d.base}/fapi/v1/klines?symbol=BTCUSDT&interval=1d&startTime=${start}&endTime=${end}&limit=1500`)).json()) as [number, string, string, string, string][]
    const days = klines.filter((k) => k[0] >= start && k[0] < end)
    assert.ok(days.length > 100, `${days.length} days`)
    const expected = (Number(done.config.capital) * Number(days.at(-1)![4])) / Number(days[0]![4])
    const hold = await poll('the buy-and-hold line', 20_000, () =>
      page.evaluate<{ first: number; last: number; lastTime: number; n: number } | undefined>(`(() => {
        const series = document.querySelector('[data-testid=equity-chart]')?.chartSeries
        if (!series || series.length < 2) return undefined
        const data = series[1].data()
        return { first: data[0].value, last: data.at(-1).value, lastTime: data.at(-1).time, n: data.length }
      })()`),
    )
    assert.equal(hold.n, days.length)
    assert.ok(Math.abs(hold.first - Number(done.config.capital)) < 1e-6, `starts at the capital: ${hold.first}`)
    assert.ok(Math.abs(hold.last - expected) < 1e-6, `ends at ${hold.last}, expected ${expected}`)
    assert.ok(hold.lastTime <= end / 1000, 'no point after the run')

    // The axes write values as the cards do: the final equity as its card, a drawdown as a percentage.
    const axis = await page.evaluate<{ equity: string; equityMarks: string[]; drawdown: string; drawdownMarks: string[] }>(`(() => {
      const options = (id) => document.querySelector('[data-testid=' + id + ']').chart.options().localization
      const equity = options('equity-chart')
      const drawdown = options('drawdown-chart')
      return {
        equity: equity.priceFormatter(${Number(done.result.final_equity)}),
        equityMarks: equity.tickmarksPriceFormatter([8000, 12000]),
        drawdown: drawdown.priceFormatter(-0.1234),
        drawdownMarks: drawdown.tickmarksPriceFormatter([-0.2, -0.05]),
      }
    })()`)
    assert.equal(axis.equity, await page.innerText('[data-testid=final-equity]'))
    // The marks as the cards write them, not padded by the library to the longest one's decimals.
    assert.deepEqual(axis.equityMarks, ['8,000.00 USDT', '12,000.00 USDT'])
    assert.equal(axis.drawdown, '-12.34 %')
    assert.deepEqual(axis.drawdownMarks, ['-20.00 %', '-5.00 %'])
  })

  it('downloads every trade as CSV (all pages of the table), the rows equal to the job\'s trades; quantities carry their unit', async () => {
    await page.setViewportSize(LAPTOP)
    const trades = done.result.trades
    assert.ok(trades.length > 100, `more trades than one page: ${trades.length}`)
    assert.equal(await page.locator('[data-testid=trades-table] tbody tr').count(), 100)
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=trades-csv]')])
    assert.equal(download.suggestedFilename(), `${done.id}-trades.csv`)
    const lines = fs.readFileSync((await download.path())!, 'utf8').split('\r\n')
    assert.equal(lines.at(-1), '', 'ends with a line break')
    const [header, ...rows] = lines.slice(0, -1)
    const columns = header!.split(',')
    assert.deepEqual(columns, ['id', 'symbol', 'side', 'entry_time', 'entry_price', 'exit_time', 'exit_price', 'qty', 'fee', 'funding', 'pnl', 'exit_reason'])
    assert.deepEqual(
      rows,
      trades.map((t) => columns.map((c) => (t[c] === undefined ? '' : String(t[c]))).join(',')),
    )

    const info = (await (await fetch(`${d.base}/v1/market/exchange-info?symbol=BTCUSDT`)).json()) as { symbols: { baseAsset: string }[] }
    const base = info.symbols[0]!.baseAsset
    assert.equal(base, 'BTC')
    const quantities = await poll('quantities with their unit', 5_000, async () => {
      const cells = await page.$$eval('[data-testid=trades-table] tbody td:nth-child(8)', (tds) => tds.map((td) => td.textContent ?? ''))
      return cells.every((c) => c.endsWith(` ${base}`)) ? cells : undefined
    })
    assert.deepEqual(quantities, trades.slice(0, 100).map((t) => `${t.qty} ${base}`))
    await page.setViewportSize(PHONE)
  })

  it('at 390 px the backtests list keeps each job\'s template, symbols and span in sight; at 1280 px they have their columns', async () => {
    await page.click('header nav a[href="/app/backtests"]')
    await page.waitForSelector(`[data-testid=backtests-table] tr[data-job-id=${done.id}]`)
    for (const [field, text] of [['template', 'sma_cross'], ['symbols', 'BTCUSDT'], ['span', '2024-01-01 → 2024-04-30']] as const) {
      const cells = await boxes(page, `[data-testid=backtests-table] tr[data-job-id=${done.id}] [data-field=${field}]`)
      assertInView(cells, PHONE.width, field)
      assert.equal(cells[0]!.text, text)
    }
    assertInView(await boxes(page, '[data-testid=backtests-table] th[data-key]'), PHONE.width, 'metrics header')
    assert.ok((await page.evaluate<number>('document.documentElement.scrollWidth')) <= PHONE.width)
    await page.setViewportSize(LAPTOP)
    assert.equal((await boxes(page, `tr[data-job-id=${done.id}] [data-testid=job-summary]`))[0]!.width, 0, 'the summary gives way to the columns')
    assertInView(await boxes(page, '[data-testid=backtests-table] thead th:not(:first-child)'), LAPTOP.width, 'laptop')
    await page.setViewportSize(PHONE)
  })

  it('the funding table at 390 px: fits its card, each symbol\'s interval beside its annualised rate, a page of 50 rows, the page no longer than a few screens', async () => {
    const rates = (await (await fetch(`${d.base}/funding/rates`)).json()) as { symbol: string; fundingIntervalHours: number | null }[]
    assert.ok(rates.length > 50, `${rates.length} symbols: more than a page`)
    await page.click('header nav a[href="/app/market"]')
    await page.waitForSelector('[data-testid=funding-table] tbody tr')
    const fit = await page.evaluate<{ table: number; wrap: number; page: number; height: number }>(`(() => {
      const wrap = document.querySelector('[data-testid=funding-table]').parentElement
      return { table: wrap.scrollWidth, wrap: wrap.clientWidth, page: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight }
    })()`)
    assert.ok(fit.table <= fit.wrap, `the table is ${fit.table} px in a ${fit.wrap} px card`)
    assert.ok(fit.page <= PHONE.width, `the page is ${fit.page} px wide`)
    assert.ok(fit.height < 4 * PHONE.height, `the page is ${fit.height} px tall`)
    assert.equal(await page.locator('[data-testid=funding-table] tbody tr').count(), 50)
    assertInView(await boxes(page, '[data-testid=funding-pager] button'), PHONE.width, 'pager')
    const shown = await page.$$eval('[data-testid=funding-table] tbody tr', (trs) => trs.map((tr) => [tr.getAttribute('data-symbol')!, tr.querySelector('td[data-interval-hours]')?.textContent ?? '']))
    const hours = new Map(rates.map((r) => [r.symbol, r.fundingIntervalHours]))
    for (const [symbol, text] of shown) assert.equal(text, hours.get(symbol!) === null ? '—' : `${hours.get(symbol!)} h`, symbol)
    assertInView(await boxes(page, '[data-testid=funding-table] td[data-interval-hours]'), PHONE.width, 'interval')
    assertInView(await boxes(page, '[data-testid=funding-table] td[data-key=annualized]'), PHONE.width, 'annualised')
    await page.setViewportSize(LAPTOP)
    assertInView(await boxes(page, '[data-testid=funding-table] thead th'), LAPTOP.width, 'every column at 1280 px')
    await page.setViewportSize(PHONE)
  })

  it('raised no console error or page error', () => {
    assert.deepEqual(d.consoleErrors, [])
  })
})
