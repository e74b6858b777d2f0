import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { poll } from '../support/poll.js'
import { browserMissing } from './browser.js'
import { type DashboardApp, startDashboardApp } from './dashboard-app.js'

/**
 * Protective exits in the dashboard (issue 30) at a laptop's 1280 px and a phone's 390 px: the backtest
 * form sends them (a refused one is shown at its field), the result says what closed each trade and how
 * finely the exits were judged, the chart draws the configured levels, a strategy shows its exits.
 */
const PHONE = { width: 390, height: 844 }
const LAPTOP = { width: 1280, height: 900 }

interface ApiJob {
  id: string
  config: { exits?: Record<string, string>; slippage_bps?: string }
  result: { trades: { id: number; exit_reason?: string }[]; exit_resolution?: Record<string, Record<string, number>>; metrics: { exit_reasons?: Record<string, number> } }
}

describe('protective exits in the dashboard at 1280 and 390 px (pglite, replay exchange)', { skip: browserMissing() }, () => {
  let d: DashboardApp

  before(async () => {
    d = await startDashboardApp(['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write', 'market:read'], 'exits@example.test')
    await d.signIn('/app/backtests', '[data-testid=backtests-table]')
  })
  after(async () => {
    await d?.close()
  })

  for (const [name, viewport] of [
    ['1280', LAPTOP],
    ['390', PHONE],
  ] as const) {
    it(`at ${name} px a backtest with exits from the form shows exit reasons, the resolution and the configured levels`, async () => {
      const { page } = d
      await page.setViewportSize(viewport)
      await page.click('header nav a[href="/app/backtests"]')
      await page.click('[data-testid=new-backtest]')
      await page.waitForSelector('[data-testid=backtest-form] select[name=template_id] option', { state: 'attached' })
      await page.selectOption('select[name=template_id]', 'sma_cross')
      await page.fill('[data-param=fast]', '10')
      await page.fill('[data-param=slow]', '30')
      await page.selectOption('select[name=timeframe]', '1h')
      await page.fill('input[name=start]', '2025-05-05')
      await page.fill('input[name=end]', '2025-06-10')
      // A stop of 200 %: the API's refusal names exits.stop_loss, and the form shows it there.
      await page.fill('input[name="exits.stop_loss"]', '2')
      await page.click('[data-testid=backtest-submit]')
      const refusal = await page.waitForSelector('[data-testid="field-error-exits.stop_loss"]')
      assert.match((await refusal.textContent())!, /stop_loss/)
      assert.equal(await page.getAttribute('input[name="exits.stop_loss"]', 'aria-invalid'), 'true')
      assert.equal(await page.$('[data-testid=backtest-form] [data-testid=error]'), null, 'shown at the field, not again in the box')
      // The browser logs the refused POST's 400 as a failed resource: expected here, and the only error allowed.
      assert.deepEqual(d.consoleErrors.splice(0), ['Failed to load resource: the server responded with a status of 400 (Bad Request)'])

      await page.fill('input[name="exits.stop_loss"]', '0.005')
      await page.fill('input[name="exits.take_profit"]', '0.01')
      await page.fill('input[name=slippage_bps]', '2')
      await page.click('[data-testid=backtest-submit]')
      await page.waitForURL(/\/app\/backtests\/bt_[0-9a-f]+$/)
      const id = new URL(page.url()).pathname.split('/').at(-1)!
      await page.waitForSelector('[data-testid=backtest-progress][data-status=done]', { timeout: 90_000 })
      await page.waitForSelector('[data-testid=exit-facts]')

      const job = await d.apiJob<ApiJob>(id)
      assert.deepEqual(job.config.exits, { stop_loss: '0.005', take_profit: '0.01', trigger: 'last' })
      assert.equal(job.config.slippage_bps, '2')
      const oneMinute = job.result.exit_resolution!.BTCUSDT!['1m']!
      assert.match((await page.textContent('[data-testid=exit-resolution] dd'))!, new RegExp(`^BTCUSDT: 1m ${oneMinute.toLocaleString('en-US')} bars`))
      assert.ok(await page.$('[data-testid=ambiguous-exits]'))
      const reasons = job.result.metrics.exit_reasons!
      assert.ok(reasons.stop_loss! > 0 && reasons.take_profit! > 0, JSON.stringify(reasons))
      assert.match((await page.textContent('[data-testid=exit-reasons] dd'))!, new RegExp(`stop_loss ${reasons.stop_loss}`))

      // The first page of trades, each with the API's reason, and the reason in sight at this width.
      const rows = await page.$$eval('[data-testid=trades-table] tbody tr', (els) =>
        els.map((el) => {
          const cell = el.lastElementChild as unknown as { getBoundingClientRect(): { width: number; right: number }; textContent: string }
          return { id: Number(el.getAttribute('data-trade-id')), reason: el.getAttribute('data-exit-reason'), text: cell.textContent.trim(), width: cell.getBoundingClientRect().width }
        }),
      )
      assert.deepEqual(
        rows.map((r) => [r.id, r.reason]),
        job.result.trades.slice(0, rows.length).map((t) => [t.id, t.exit_reason]),
      )
      for (const row of rows) {
        assert.equal(row.text, row.reason!.replace('_', ' '))
        assert.ok(row.width > 0, `trade ${row.id}'s exit reason is hidden at ${name} px`)
      }

      // The chart: configured stop and target as dashed lines over the trades' lives, and what they leave out said.
      await poll('the configured levels drawn', 30_000, async () => ((await page.getAttribute('[data-testid=price-chart]', 'data-level-points')) ?? '0') !== '0' || undefined)
      assert.match((await page.getAttribute('[data-testid=level-legend]', 'title'))!, /trailing stop's moves and levels a strategy module states are not in the result/)
      const markers = await page.$eval('[data-testid=price-chart]', (el) => ((el as unknown as { chartMarkers: { id: string; color: string }[] }).chartMarkers ?? []).map((m) => [m.id.split('-').slice(0, 3).join('-'), m.color]))
      assert.ok(markers.some(([kind, color]) => /^exit-(long|short)-stop_loss$/.test(kind!) && color === '#d4414b'), JSON.stringify(markers.slice(0, 10)))
      assert.deepEqual(d.consoleErrors, [])
    })
  }

  it('a strategy with exits shows them at both widths', async () => {
    const strategy = await d.api<{ id: string }>('POST', '/v1/strategies', {
      name: 'guarded',
      template_id: 'sma_cross',
      params: { fast: 10, slow: 30 },
      symbols: ['BTCUSDT'],
      timeframe: '1h',
      capital: '1000',
      exits: { stop_loss: '0.02', trailing_stop: '0.01', trailing_activation: '0.03', trigger: 'mark' },
    })
    for (const viewport of [LAPTOP, PHONE]) {
      await d.page.setViewportSize(viewport)
      await d.page.goto(`${d.base}/app/strategies/${strategy.id}`)
      const shown = await d.page.waitForSelector('[data-testid=strategy-exits]')
      assert.equal((await shown.textContent())!.trim(), 'Protective exits: stop loss 2%, trailing stop 1%, trailing activation 3%, trigger mark')
      const box = await shown.boundingBox()
      assert.ok(box && box.x >= 0 && box.x + box.width <= viewport.width + 0.5, `exits line overflows at ${viewport.width} px`)
    }
  })
})
