import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import type { NewAlgoOrder } from '../../src/trading/binance/algo-orders.js'
import { BinanceTradingClient } from '../../src/trading/binance/trading-client.js'
import { account, hex, LIVE_PARAMS } from '../live/live-accounts.js'
import { poll } from '../support/poll.js'
import { browserMissing } from './browser.js'
import { type DashboardApp, startDashboardApp } from './dashboard-app.js'

/**
 * A live position's protective orders on the strategy page (issue 31), at a laptop's 1280 px and a phone's
 * 390 px: each order the exchange holds for the position with its kind, type, trigger, working type and
 * status. The orders are placed by hand on a paused run's account (no runner touches them), one of them not
 * the run's.
 */
const TRADER = account('WEBGUARD')
const REPLAY = { speed: 120, replayStart: Date.UTC(2025, 5, 17, 6, 0, 0), accounts: [{ ...TRADER, balances: { USDT: '10000' } }] }
const VIEWPORTS = [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
]

describe('protective orders on the strategy page (pglite, replay exchange)', { skip: browserMissing() }, () => {
  let d: DashboardApp
  let pool: RunnerPool
  let id: string
  let keyId: string
  let placed: NewAlgoOrder[]

  before(async () => {
    d = await startDashboardApp(['strategies:read', 'strategies:write', 'market:read'], 'guarded@example.test', {}, { replay: REPLAY })
    const { t } = d
    pool = new RunnerPool({ db: t.database.handle.db, market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals, secrets: t.services.secrets })
    pool.start()
    // The app token's calls (exchange keys take nothing else), on the wall clock the replay's window expects.
    const bearer = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      t.clock.value = Date.now()
      const res = await t.app.inject({ method, url, headers: { authorization: `Bearer ${d.token}` }, ...(payload ? { payload } : {}) })
      assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`)
      return res.json()
    }
    const key = await bearer('POST', '/v1/exchange-keys', { api_key: TRADER.apiKey, api_secret: TRADER.secretKey, label: 'guarded' })
    keyId = key.id
    id = (await bearer('POST', '/v1/strategies', { name: 'guarded', template_id: 'sma_cross', params: LIVE_PARAMS, symbols: ['BTCUSDT'], timeframe: '1m', capital: '1000', leverage: 2 })).id
    const client = new BinanceTradingClient(t.services.market.client, { apiKey: TRADER.apiKey, apiSecret: TRADER.secretKey }, Date.now)
    // Paused holding a position: a run that traded flat between the poll and the pause (a slow host) is deployed again.
    let held: { positionAmt: string; markPrice: string } | undefined
    for (let attempt = 1; held === undefined; attempt++) {
      assert.ok(attempt <= 5, 'the run was paused flat five times')
      await bearer('POST', `/v1/strategies/${id}/deploy`, { dry_run: false, exchange_key_id: key.id })
      await poll('the live run to hold a position', 120_000, async () => ((await bearer('GET', `/v1/strategies/${id}/positions`)).length > 0 ? true : undefined))
      await bearer('POST', `/v1/strategies/${id}/pause`, {})
      const position = await client.positions('BTCUSDT')
      assert.equal(position.kind, 'ok', JSON.stringify(position))
      held = position.kind === 'ok' ? position.value.find((p) => Number(p.positionAmt) !== 0) : undefined
    }
    const long = Number(held!.positionAmt) > 0
    const away = (fraction: number) => (Math.round(Number(held!.markPrice) * (1 + (long ? fraction : -fraction)) * 10) / 10).toFixed(1)
    const close = long ? 'SELL' : 'BUY'
    placed = [
      { symbol: 'BTCUSDT', side: close, type: 'STOP_MARKET', triggerPrice: away(-0.05), closePosition: true, workingType: 'MARK_PRICE', priceProtect: true, clientAlgoId: `pa-${hex(id)}-s1` },
      { symbol: 'BTCUSDT', side: close, type: 'TRAILING_STOP_MARKET', quantity: '0.001', reduceOnly: true, callbackRate: '2', workingType: 'CONTRACT_PRICE', clientAlgoId: `pa-${hex(id)}-r2` },
      { symbol: 'BTCUSDT', side: close, type: 'TAKE_PROFIT_MARKET', triggerPrice: away(0.05), quantity: '0.001', reduceOnly: true, workingType: 'CONTRACT_PRICE', clientAlgoId: 'by-hand-7' },
    ]
    for (const order of placed) {
      const answer = await client.algo.place(order)
      assert.equal(answer.kind, 'ok', JSON.stringify(answer))
    }
    await d.signIn('/app/strategies', '[data-testid=strategies-table]')
  })
  after(async () => {
    await pool?.stop()
    await d?.close()
  })

  for (const viewport of VIEWPORTS) {
    it(`at ${viewport.width} px lists the live position's protective orders as the exchange holds them`, async () => {
      const { page } = d
      await page.setViewportSize(viewport)
      await page.goto(`${d.base}/app/strategies/${id}`)
      await page.waitForSelector('[data-testid=protective-orders][data-state=resting]')
      const shown = await page.$$eval('[data-testid=protective-order]', (els) =>
        els.map((el) => {
          const box = (el as unknown as { getBoundingClientRect(): { left: number; right: number } }).getBoundingClientRect()
          return { kind: el.getAttribute('data-kind'), type: el.getAttribute('data-type'), trigger: el.getAttribute('data-trigger'), working: el.getAttribute('data-working-type'), status: el.getAttribute('data-status'), text: el.textContent!.replace(/\s+/g, ' ').trim(), left: box.left, right: box.right }
        }),
      )
      assert.deepEqual(
        shown.map((o) => [o.kind, o.type, o.trigger, o.working, o.status]).sort(),
        [
          ['other', 'TAKE_PROFIT_MARKET', String(Number(placed[2]!.triggerPrice)), 'CONTRACT_PRICE', 'NEW'],
          ['stop_loss', 'STOP_MARKET', String(Number(placed[0]!.triggerPrice)), 'MARK_PRICE', 'NEW'],
          ['trailing_stop', 'TRAILING_STOP_MARKET', '', 'CONTRACT_PRICE', 'NEW'],
        ],
      )
      const stop = shown.find((o) => o.kind === 'stop_loss')!
      assert.match(stop.text, new RegExp(`^stop loss: STOP_MARKET ${placed[0]!.side.toLowerCase()} at [\\d,.]+ on MARK_PRICE · closes the position · NEW$`))
      assert.match(shown.find((o) => o.kind === 'trailing_stop')!.text, /^trailing stop: TRAILING_STOP_MARKET (buy|sell) (from [\d,.]+, )?2% behind the best price on CONTRACT_PRICE · qty 0\.001 · NEW$/)
      assert.match(shown.find((o) => o.kind === 'other')!.text, /^not this run’s: TAKE_PROFIT_MARKET/)
      for (const o of shown) assert.ok(o.left >= 0 && o.right <= viewport.width + 0.5, `${o.kind} overflows at ${viewport.width} px (${o.left}–${o.right})`)
      assert.deepEqual(d.consoleErrors, [])
    })
  }

  for (const viewport of VIEWPORTS) {
    it(`at ${viewport.width} px a live resume asks first, naming the exchange key and the capital, and cancelling sends nothing`, async () => {
      const { page } = d
      await page.setViewportSize(viewport)
      await page.goto(`${d.base}/app/strategies/${id}`)
      await page.waitForSelector('[data-testid=deploy-form]')
      const deploys: string[] = []
      const onRequest = (request: { method(): string; url(): string }) => {
        if (request.method() === 'POST' && new URL(request.url()).pathname.endsWith('/deploy')) deploys.push(request.url())
      }
      page.on('request', onRequest)
      try {
        await page.check('[data-testid=mode-live]')
        await page.fill('[data-testid=deploy-form] input[name=capital]', '750')
        await page.click('[data-testid=deploy]')
        const confirm = await page.waitForSelector('[data-testid=deploy-confirm]')
        assert.match(await confirm.innerText(), new RegExp(`^Deploy strategy ${id} \\(guarded\\) LIVE on exchange key ${keyId} \\(guarded\\) with 750 USDT at 2x\\? Real orders will be placed\\.`))
        const box = (await confirm.boundingBox())!
        assert.ok(box.x >= 0 && box.x + box.width <= viewport.width + 0.5, `the question overflows at ${viewport.width} px`)
        await page.click('[data-testid=deploy-cancel]')
        await page.waitForSelector('[data-testid=deploy-confirm]', { state: 'detached' })
        await page.waitForSelector('[data-testid=deploy]')
        assert.deepEqual(deploys, [], 'cancelled: no deploy request')
        assert.equal((await d.api<{ status: string }>('GET', `/v1/strategies/${id}`)).status, 'paused')
        // A change to the form withdraws the question, so what is confirmed is what would be sent.
        await page.click('[data-testid=deploy]')
        await page.waitForSelector('[data-testid=deploy-confirm]')
        await page.fill('[data-testid=deploy-form] input[name=capital]', '600')
        await page.waitForSelector('[data-testid=deploy-confirm]', { state: 'detached' })
        assert.deepEqual(deploys, [])
      } finally {
        page.off('request', onRequest)
      }
      assert.deepEqual(d.consoleErrors, [])
    })
  }

  it('confirming the question resumes the run live with the capital it named', async () => {
    const { page } = d
    await page.goto(`${d.base}/app/strategies/${id}`)
    await page.check('[data-testid=mode-live]')
    await page.fill('[data-testid=deploy-form] input[name=capital]', '750')
    await page.click('[data-testid=deploy]')
    // What the page sends on "Deploy live", and the API's answer to it: the run it starts may stop on the hand-placed
    // order (below) before the page renders it as deployed, so the page's later state proves nothing either way.
    const answered = page.waitForResponse((response) => response.request().method() === 'POST' && new URL(response.url()).pathname.endsWith(`/v1/strategies/${id}/deploy`))
    await page.click('[data-testid=deploy-live-yes]')
    const response = await answered
    assert.equal(response.status(), 200, await response.text())
    assert.deepEqual(JSON.parse(response.request().postData() ?? '{}'), { dry_run: false, capital: '750' }) // the server picks the key the question named
    const resumed = await d.api<{ status: string; mode: string; exchange_key: { id: string } | null; last_error: { code: string } | null }>('GET', `/v1/strategies/${id}`)
    assert.deepEqual([resumed.mode, resumed.exchange_key?.id], ['live', keyId])
    // The resumed run then meets the hand-placed order on its symbol (by-hand-7) and stops on it, sooner or later
    // after this read depending on the host: which state it is read in is the run's business, not the page's.
    assert.ok(resumed.status === 'deployed' || (resumed.status === 'error' && resumed.last_error?.code === 'FOREIGN_ORDER'), JSON.stringify(resumed))
    const run = await d.t.database.handle.db.selectFrom('strategy_runs').select(['capital', 'dry_run']).where('strategy_id', '=', id).orderBy('run', 'desc').executeTakeFirstOrThrow()
    assert.deepEqual([Number(run.capital), run.dry_run], [750, false])
    assert.deepEqual(d.consoleErrors, [])
  })
})
