import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { poll } from '../support/poll.js'
import { browserMissing } from './browser.js'
import { type DashboardApp, startDashboardApp } from './dashboard-app.js'

/**
 * A trader's own module by its name and version wherever the dashboard shows which template runs (issue
 * 35): the backtests list and a backtest's header, compare, strategies, sweeps; never only tpl-…. At a
 * laptop's 1280 px and a phone's 390 px (where the lists' template column is hidden, and headers stay).
 */
const PHONE = { width: 390, height: 844 }
const LAPTOP = { width: 1280, height: 900 }
const ATR_BREAKOUT = `export const params = {
  lookback: { type: 'integer', default: 20, minimum: 2, maximum: 200 },
  atr_period: { type: 'integer', default: 14, minimum: 2, maximum: 100 },
}
export function warmup(p) { return p.lookback }
export function create(p, ctx) { return { onBar(bar) { return NaN } } }
`
const RANGE = { symbols: ['BTCUSDT'], timeframe: '1h', start: '2023-01-01T00:00:00Z', end: '2023-03-31T23:00:00Z', capital: '10000' }

describe('custom templates by name in the dashboard at 1280 and 390 px (pglite, replay exchange)', { skip: browserMissing() }, () => {
  let d: DashboardApp
  let id: string
  let jobs: string[]
  let strategy: string
  let sweep: string

  before(async () => {
    // This test opens the same jobs again within seconds at the second width: the API's one read of a job per 5 s
    // answers 429, which the page waits out (Retry-After) and the browser logs; every other console error counts.
    d = await startDashboardApp(['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write'], 'names@example.test', {}, {}, {
      counts: (text) => !/^Failed to load resource: the server responded with a status of 429/.test(text),
    })
    id = (await d.api<{ id: string }>('POST', '/v1/templates', { name: 'atr-breakout', source: ATR_BREAKOUT })).id
    jobs = []
    for (const lookback of [10, 30]) jobs.push((await d.api<{ id: string }>('POST', '/v1/backtest/jobs', { ...RANGE, template_id: id, params: { lookback } })).id)
    strategy = (await d.api<{ id: string }>('POST', '/v1/strategies', { name: 'breakout', template_id: id, params: {}, symbols: RANGE.symbols, timeframe: '1h', capital: '1000' })).id
    sweep = (await d.api<{ id: string }>('POST', '/v1/backtest/sweeps', { base: { ...RANGE, template_id: id, params: {} }, grid: { lookback: [10, 20] } })).id
    await poll('both jobs done', 90_000, async () => {
      const listed = await d.api<{ data: { id: string; status: string }[] }>('GET', '/v1/backtest/jobs')
      return jobs.every((job) => listed.data.find((one) => one.id === job)?.status === 'done') || undefined
    }, 500)
    await d.signIn('/app/backtests', '[data-testid=backtests-table]')
  })
  after(async () => {
    await d?.close()
  })

  /**
   * Once its template is named (the catalogue read): whether any of the name's elements under `selector` is in sight
   * (a list names it twice, in its column and under the job id on a phone; one of them shows at each width).
   */
  const named = async (selector: string) => {
    const name = `${selector} [data-template-id="${id}"]:text("atr-breakout v1")`
    await d.page.waitForSelector(name, { state: 'attached' })
    const elements = await d.page.$$(name)
    for (const element of elements) assert.equal(await element.getAttribute('title'), id, 'the id is at hand on hover')
    return { isVisible: async () => (await Promise.all(elements.map((element) => element.isVisible()))).some(Boolean) }
  }

  for (const [width, viewport] of [
    ['1280', LAPTOP],
    ['390', PHONE],
  ] as const) {
    it(`at ${width} px names the template in lists, headers and compare, never only by its id`, async () => {
      const { page } = d
      await page.setViewportSize(viewport)
      const pages: [string, string, string][] = [
        ['backtests list', '/app/backtests', `[data-testid=backtests-table] tr[data-job-id="${jobs[0]}"]`],
        ['backtest header', `/app/backtests/${jobs[0]}`, '[data-testid=backtest]'],
        ['strategies list', '/app/strategies', `[data-testid=strategies-table] tr[data-strategy-id="${strategy}"]`],
        ['strategy header', `/app/strategies/${strategy}`, '[data-testid=strategy]'],
        ['sweeps list', '/app/sweeps', `tr[data-sweep-id="${sweep}"]`],
        ['sweep header', `/app/sweeps/${sweep}`, '[data-testid=sweep]'],
      ]
      for (const [what, path, selector] of pages) {
        await page.goto(`${d.base}${path}`)
        const element = await named(selector)
        // Lists hide their template column on a phone; a header shows it at every width.
        if (what.endsWith('header') || width === '1280') assert.ok(await element.isVisible(), `${what}: the name is in sight`)
        assert.ok(!(await page.innerText('main')).includes('tpl-'), `${what} shows the id: ${await page.innerText('main')}`)
      }
      await page.goto(`${d.base}/app/backtests/compare/${jobs[0]}/${jobs[1]}`)
      const row = await page.waitForSelector('[data-testid=compare-table] tr:has-text("Template")')
      await poll('compare names the template', 10_000, async () => ((await row.innerText()).match(/atr-breakout v1/g)?.length === 2 ? true : undefined))
      assert.ok(!(await page.innerText('main')).includes('tpl-'))
      assert.deepEqual(d.consoleErrors, [])
    })
  }

  it('the saved strategy is named after the template, not its id', async () => {
    const { page } = d
    await page.setViewportSize(LAPTOP)
    await page.goto(`${d.base}/app/backtests/${jobs[0]}`)
    await named('[data-testid=backtest]')
    const input = await page.waitForSelector('[data-testid=save-strategy] input[name=name]')
    await poll('the default name follows the catalogue', 10_000, async () => ((await input.inputValue()) === 'atr-breakout BTCUSDT 1h' ? true : undefined))
  })
})
