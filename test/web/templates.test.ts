import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import type { TestApp } from '../support/app.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'
import { browserMissing } from './browser.js'
import { type DashboardApp, startDashboardApp } from './dashboard-app.js'

const SCOPES = ['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write'] as const
const EXAMPLE = fs.readFileSync(new URL('../../examples/strategies/sma-cross.js', import.meta.url), 'utf8')
/** Set to a folder to keep a screenshot of each page the tests reach (for a person to look at). */
const SCREENSHOTS = process.env.TEST_WEB_SCREENSHOTS

/** What the editor's container exposes (web/src/editor/code-editor.tsx): CodeMirror's own view. */
interface EditorHost {
  editorView: { state: { doc: { toString(): string; lineAt(pos: number): { number: number; from: number } } }; posAtDOM(node: unknown, offset?: number): number }
  querySelector(selector: string): unknown
  querySelectorAll(selector: string): ArrayLike<unknown>
}

interface ApiTemplate {
  id: string
  custom: boolean
  version?: number
  name?: string
  defaults: Record<string, unknown>
  multi_symbol: boolean
  source?: string
  versions?: { version: number }[]
}

/** Where the editor draws its lint mark: the line CodeMirror puts it on, its first column, the marked text and that line's text. */
interface LintMark {
  line: number
  column: number
  marked: string
  lineText: string
  gutterMarkers: number
}

const skip = browserMissing()

describe('template editor in headless Chromium (pglite, replay exchange, sandbox)', { skip }, () => {
  let d: DashboardApp
  let t: TestApp
  let base: string
  let key: KeyPair
  let token: string
  let page: Page
  let pageErrors: string[]

  before(async () => {
    // Every console error counts but the browser's own line for an answer of 400 or 409, which the
    // page receives and shows on purpose here (a refused upload, a refused delete).
    d = await startDashboardApp([...SCOPES], 'author@example.test', {}, {}, { counts: (text) => !/^Failed to load resource: the server responded with a status of 4(00|09)/.test(text) })
    ;({ t, base, key, token, page, consoleErrors: pageErrors } = d)
  })
  after(async () => {
    await d?.close()
  })

  const api = <T>(method: string, url: string, body?: unknown): Promise<T> => d.api<T>(method, url, body)
  const apiJob = (id: string) =>
    d.apiJob<{ status: string; config: { template_id: string; template_version: number; params: unknown }; result: { metrics: { total_trades: number } } }>(id)
  /** Screenshots in both colour schemes, when TEST_WEB_SCREENSHOTS names a folder. */
  const shot = async (name: string) => {
    if (!SCREENSHOTS) return
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true })
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-dark.png`), fullPage: true })
    await page.emulateMedia({ colorScheme: 'light' })
  }
  const editorText = () => page.$eval('[data-testid=code-editor]', (el) => (el as unknown as EditorHost).editorView.state.doc.toString())
  /** Replaces the module as a person would: select all in the editor, then type (insert) the new text. */
  const typeModule = async (text: string) => {
    await page.click('[data-testid=code-editor] .cm-content')
    await page.keyboard.press('Control+A')
    await page.keyboard.insertText(text)
    assert.equal(await editorText(), text, 'the editor holds what was typed')
  }
  const lintMark = () =>
    page.$eval('[data-testid=code-editor]', (host): LintMark | null => {
      const editor = host as unknown as EditorHost
      const mark = editor.querySelector('.cm-lintRange-error, .cm-lintPoint-error') as { textContent: string; closest(s: string): { textContent: string } } | null
      if (!mark) return null
      const view = editor.editorView
      const pos = view.posAtDOM(mark, 0)
      const line = view.state.doc.lineAt(pos)
      return {
        line: line.number,
        column: pos - line.from + 1,
        marked: mark.textContent,
        lineText: mark.closest('.cm-line').textContent,
        gutterMarkers: editor.querySelectorAll('.cm-gutter-lint .cm-lint-marker-error').length,
      }
    })

  it('signs in and lists the built-in templates with their defaults, and none of the user\'s yet', async () => {
    await page.goto(`${base}/app/templates`)
    await page.fill('textarea[name=token]', token)
    await page.click('[data-testid=sign-in-submit]')
    await page.waitForSelector('[data-testid=builtin-templates] tbody tr')
    assert.equal(new URL(page.url()).pathname, '/app/templates', 'the deep link survives sign-in')
    assert.equal(await page.getAttribute('header nav a[aria-current=page]', 'href'), '/app/templates')
    const builtIns = (await api<{ data: ApiTemplate[] }>('GET', '/v1/templates')).data
    assert.ok(builtIns.length > 0 && builtIns.every((tpl) => !tpl.custom))
    const rows = await page.$$eval('[data-testid=builtin-templates] tbody tr', (trs) =>
      trs.map((tr) => ({
        id: tr.getAttribute('data-template-id'),
        defaults: Object.fromEntries([...tr.querySelectorAll('[data-param]')].map((c) => [c.getAttribute('data-param'), JSON.parse(c.getAttribute('data-default')!)])),
      })),
    )
    assert.deepEqual(rows, builtIns.map((tpl) => ({ id: tpl.id, defaults: tpl.defaults })))
    await page.waitForSelector('[data-testid=no-own-templates]')
    await shot('templates-empty')
  })

  let templateId: string
  it('creates a template in the editor, starting from the SMA-cross example, and lists it', async () => {
    await page.click('[data-testid=new-template]')
    await page.waitForSelector('[data-testid=code-editor] .cm-content')
    assert.equal(new URL(page.url()).pathname, '/app/templates/new')
    assert.equal(await editorText(), EXAMPLE, 'a new template starts from the example module')
    assert.ok(await page.isDisabled('[data-testid=template-save]'), 'no name, no save')
    await page.fill('[data-testid=template-form] input[name=name]', 'my sma cross')
    await page.fill('[data-testid=template-form] textarea[name=description]', 'the example, ported')
    await shot('editor-new')
    await page.click('[data-testid=template-save]')
    await page.waitForURL(/\/app\/templates\/tpl-[0-9a-f]{16}$/, { timeout: 30_000 })
    templateId = new URL(page.url()).pathname.split('/').at(-1)!
    await page.waitForSelector(`[data-testid=template-editor][data-template-id=${templateId}][data-version="1"] [data-testid=code-editor] .cm-content`)
    assert.equal(await editorText(), EXAMPLE)
    assert.equal(await page.getAttribute('[data-testid=template-status]', 'data-dirty'), 'false')

    const stored = await api<ApiTemplate>('GET', `/v1/templates/${templateId}`)
    assert.deepEqual([stored.name, stored.version, stored.source], ['my sma cross', 1, EXAMPLE])

    await page.click('header nav a[href="/app/templates"]')
    const row = await page.waitForSelector(`[data-testid=own-templates] tr[data-template-id=${templateId}]`)
    assert.equal(await row.getAttribute('data-version'), '1')
    assert.match(await row.innerText(), /my sma cross[\s\S]*v1[\s\S]*fast=10[\s\S]*slow=30[\s\S]*allow_short=false/)
    await shot('templates-listed')
  })

  it('refuses a broken module with the server\'s message and marks its line:column in the editor, storing nothing', async () => {
    await page.click(`[data-testid=own-templates] tr[data-template-id=${templateId}] a`)
    await page.waitForSelector('[data-testid=code-editor] .cm-content')
    const broken = ['// a module that does not parse', '', 'export const params = {}', 'export const x = ;', 'export function create() {}', ''].join('\n')
    await typeModule(broken)
    assert.equal(await lintMark(), null, 'no mark before a save')
    await page.click('[data-testid=template-save]')
    const error = await page.waitForSelector('[data-testid=save-error]')
    const message = await error.innerText()
    assert.match(message, /does not load: SyntaxError: .*\(my sma cross\.js 4:18\)/)
    await page.waitForSelector('[data-testid=code-editor] .cm-lintRange-error')
    assert.deepEqual(await lintMark(), { line: 4, column: 18, marked: ';', lineText: 'export const x = ;', gutterMarkers: 1 })
    await shot('editor-refused')
    assert.equal((await api<ApiTemplate>('GET', `/v1/templates/${templateId}`)).version, 1, 'nothing stored')

    // TypeScript's parser names its place as "at L:C"; the mark follows it to line 2 wherever the column falls.
    await page.selectOption('[data-testid=template-form] select[name=language]', 'typescript')
    await page.waitForSelector('[data-testid=code-editor][data-language=typescript]')
    await typeModule('export const params = {}\nexport const x: number = (first second)\n')
    await page.click('[data-testid=template-save]')
    await page.waitForSelector('[data-testid=save-error]:has-text("TypeScript does not parse")')
    const tsMessage = await page.innerText('[data-testid=save-error]')
    const [, line, column] = /at (\d+):(\d+)/.exec(tsMessage)!
    assert.equal(line, '2', tsMessage)
    await poll('the mark on the TypeScript module', 5_000, async () => ((await lintMark())?.lineText === 'export const x: number = (first second)' ? true : undefined))
    const mark = (await lintMark())!
    assert.deepEqual([mark.line, mark.column, mark.gutterMarkers], [2, Number(column), 1], tsMessage)
    assert.equal((await api<ApiTemplate>('GET', `/v1/templates/${templateId}`)).version, 1, 'nothing stored')
  })

  it('saves a valid module as version 2, clears the mark, lists both versions and opens the older one', async () => {
    await page.selectOption('[data-testid=template-form] select[name=language]', 'javascript')
    const v2 = EXAMPLE.replace("fast: { type: 'integer', default: 10,", "fast: { type: 'integer', default: 12,")
    assert.notEqual(v2, EXAMPLE)
    await typeModule(v2)
    await page.click('[data-testid=template-save]')
    await page.waitForSelector('[data-testid=template-editor][data-version="2"]', { timeout: 30_000 })
    assert.equal(await page.$('[data-testid=save-error]'), null, 'the refusal is gone')
    assert.equal(await lintMark(), null, 'and so is its mark')
    assert.deepEqual(await page.$$eval('[data-testid=versions] li', (lis) => lis.map((li) => li.getAttribute('data-version'))), ['2', '1'])
    assert.match(await page.innerText('[data-testid=template-status]'), /^Version 2, saved/)
    const stored = await api<ApiTemplate>('GET', `/v1/templates/${templateId}`)
    assert.deepEqual([stored.version, stored.source, stored.defaults.fast, stored.versions!.map((v) => v.version)], [2, v2, 12, [1, 2]])

    await page.click('[data-testid=versions] li[data-version="1"] button')
    await page.waitForSelector('[data-testid=versions] li[data-version="1"][aria-current]')
    assert.equal(await editorText(), EXAMPLE, 'version 1\'s text')
    assert.match(await page.innerText('[data-testid=template-status]'), /Showing version 1 of 2/)
    await page.click('[data-testid=versions] li[data-version="2"] button')
    await page.waitForSelector('[data-testid=versions] li[data-version="2"][aria-current]')
    assert.equal(await editorText(), v2)
    assert.equal(await page.getAttribute('[data-testid=template-status]', 'data-dirty'), 'false')
    await shot('editor-version-2')
  })

  it('backtests the saved template from "Backtest this" with its defaults, to done', async () => {
    await page.click('[data-testid=backtest-this]')
    await page.waitForSelector('[data-testid=template-backtest] [data-testid=backtest-form] [data-param=fast]')
    assert.equal(await page.inputValue('[data-testid=template-backtest] select[name=template_id]'), templateId)
    assert.equal(await page.inputValue('[data-testid=template-backtest] [data-param=fast]'), '12', "version 2's default")
    assert.equal(await page.inputValue('[data-testid=template-backtest] [data-param=slow]'), '30')
    await page.fill('[data-testid=template-backtest] input[name=start]', '2024-01-01')
    await page.fill('[data-testid=template-backtest] input[name=end]', '2024-03-31')
    await page.selectOption('[data-testid=template-backtest] select[name=timeframe]', '1h')
    await shot('editor-backtest-form')
    await page.click('[data-testid=template-backtest] [data-testid=backtest-submit]')
    await page.waitForURL(/\/app\/backtests\/bt_[0-9a-f]+$/)
    const jobId = new URL(page.url()).pathname.split('/').at(-1)!
    await page.waitForSelector('[data-testid=backtest-progress][data-status=done]', { timeout: 60_000 })
    await page.waitForSelector('[data-testid=metrics] [data-metric=total_trades]')
    const job = await apiJob(jobId)
    assert.equal(job.status, 'done')
    assert.deepEqual([job.config.template_id, job.config.template_version, job.config.params], [templateId, 2, { fast: 12, slow: 30, allow_short: false }])
    assert.equal(await page.getAttribute('[data-testid=metrics] [data-metric=total_trades]', 'data-value'), String(job.result.metrics.total_trades))
    await shot('backtest-done')
  })

  it('stays within a phone\'s width: the code scrolls inside the editor, not the page', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    try {
      const pageWidth = () => page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)
      await page.click('header nav a[href="/app/templates"]')
      await page.waitForSelector(`[data-testid=own-templates] tr[data-template-id=${templateId}]`)
      const listWidth = await pageWidth()
      assert.ok(listWidth <= 390, `the list is ${listWidth} px wide on a 390 px screen`)
      await shot('phone-templates')
      await page.click(`[data-testid=own-templates] tr[data-template-id=${templateId}] a`)
      await page.waitForSelector('[data-testid=code-editor] .cm-content')
      const editorWidth = await pageWidth()
      assert.ok(editorWidth <= 390, `the editor page is ${editorWidth} px wide on a 390 px screen`)
      await shot('phone-editor')
      const scroller = await page.$eval('[data-testid=code-editor] .cm-scroller', (el) => {
        const box = el as unknown as { scrollWidth: number; clientWidth: number; scrollHeight: number; clientHeight: number; getBoundingClientRect(): { height: number } }
        return { scrollWidth: box.scrollWidth, clientWidth: box.clientWidth, scrollHeight: box.scrollHeight, clientHeight: box.clientHeight, height: box.getBoundingClientRect().height }
      })
      assert.ok(scroller.clientWidth < 390 && scroller.scrollWidth > scroller.clientWidth, `long lines scroll sideways inside the editor: ${JSON.stringify(scroller)}`)
      // The 50-line module is twice the editor's height and more: it scrolls inside a box that fits the screen.
      assert.ok(scroller.height < 844 && scroller.scrollHeight > 2 * scroller.clientHeight, `the module scrolls down inside the editor: ${JSON.stringify(scroller)}`)
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 })
    }
  })

  it('offers "Sweep this" beside "Backtest this": the sweep form on the saved template, at 1280 and 390 px (issue 35)', async () => {
    await page.waitForSelector(`[data-testid=template-editor][data-template-id=${templateId}]`)
    const heading = await page.$$eval('[data-testid=template-editor] .heading button', (buttons) => buttons.map((b) => b.getAttribute('data-testid')))
    assert.equal(heading.indexOf('sweep-this'), heading.indexOf('backtest-this') + 1, `side by side: ${heading.join(', ')}`)
    await page.click('[data-testid=sweep-this]')
    await page.waitForSelector('[data-testid=template-sweep] [data-testid=sweep-form] input[name="sweep.fast"]')
    assert.equal(await page.inputValue('[data-testid=template-sweep] select[name=template_id]'), templateId)
    assert.equal(await page.inputValue('[data-testid=template-sweep] [data-param=fast]'), '12', "version 2's default as the base")
    await page.check('[data-testid=template-sweep] input[name="sweep.fast"]')
    await page.fill('[data-testid=template-sweep] input[name="grid.fast"]', '5..15:5')
    assert.equal(await page.getAttribute('[data-testid=template-sweep] [data-testid=configurations]', 'data-count'), '3')
    assert.equal(await page.$('[data-testid=template-backtest]'), null, 'one form open at a time')
    await page.setViewportSize({ width: 390, height: 844 })
    try {
      const width = await page.evaluate<number>('document.documentElement.scrollWidth')
      assert.ok(width <= 390, `the template page with its sweep form is ${width} px wide on a 390 px screen`)
      assert.ok(await page.isVisible('[data-testid=sweep-this]'))
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 })
    }
    await page.click('[data-testid=sweep-this]')
    assert.equal(await page.$('[data-testid=template-sweep]'), null, 'closed again')
  })

  it('shows the refusal to delete a template a deployed strategy runs, and deletes it once the strategy is paused', async () => {
    const strategy = await api<{ id: string }>('POST', '/v1/strategies', { name: 'runs my module', template_id: templateId, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' })
    await api('POST', `/v1/strategies/${strategy.id}/deploy`, { dry_run: true, capital: '1000' })
    await page.waitForSelector(`[data-testid=template-editor][data-template-id=${templateId}]`)
    await page.click('[data-testid=delete-template]')
    await page.click('[data-testid=delete-template-yes]')
    const refusal = await page.waitForSelector('[data-testid=delete-error]')
    assert.match(await refusal.innerText(), /used by a deployed strategy; pause the strategy before deleting the template/)
    assert.equal((await t.signed(key, 'GET', `/v1/templates/${templateId}`)).statusCode, 200, 'still there')
    await shot('editor-delete-refused')

    await api('POST', `/v1/strategies/${strategy.id}/pause`, { close_positions: true })
    await page.click('[data-testid=delete-template]')
    await page.click('[data-testid=delete-template-yes]')
    await page.waitForURL(/\/app\/templates$/)
    await page.waitForSelector('[data-testid=no-own-templates]')
    assert.equal((await t.signed(key, 'GET', `/v1/templates/${templateId}`)).statusCode, 404)
  })

  it('raised no page error and no console error', () => {
    assert.deepEqual(pageErrors, [])
  })
})
