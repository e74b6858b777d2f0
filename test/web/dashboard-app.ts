import assert from 'node:assert/strict'
import type { BrowserContext, Page } from 'playwright-core'
import { buildDashboard } from '../../web/build.js'
import type { Scope } from '../../src/auth/scopes.js'
import { startTestApp, type TestApp, type TestAppOptions } from '../support/app.js'
import { tempDir } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { launchBrowser } from './browser.js'

/** A test app serving a fresh dashboard build, a user with a key and an app token, and a browser page on it. */
export interface DashboardApp {
  t: TestApp
  base: string
  key: KeyPair
  token: string
  browser: BrowserContext
  page: Page
  /** Every page error and console error of `page` so far. */
  consoleErrors: string[]
  /** A signed API call that must succeed; its JSON body (undefined for a 204). */
  api<T>(method: string, url: string, body?: unknown): Promise<T>
  /**
   * One job as the API gives it. The page may have just read it, and one job may be read once per
   * 5 s: a 429 is waited out by its Retry-After, in real time (the app's clock is the wall clock).
   */
  apiJob<T>(id: string): Promise<T>
  /** Opens `path` of the dashboard on `page`, signs in with the app token and waits for `ready` (a selector). */
  signIn(path: string, ready: string): Promise<void>
  close(): Promise<void>
}

/** What a test expects of the page's console: which console errors count (all by default; page errors always do). */
export interface ConsoleExpectations {
  counts?: (text: string) => boolean
}

export async function startDashboardApp(
  scopes: Scope[],
  email: string,
  env: Record<string, string> = {},
  options: TestAppOptions = {},
  expected: ConsoleExpectations = {},
): Promise<DashboardApp> {
  const dashboardDir = tempDir('web')
  await buildDashboard(dashboardDir)
  const t = await startTestApp('pglite', { RATE_LIMIT_WEIGHT_PER_MINUTE: '100000', ...env }, { replay: true, queue: 'workers', wallClock: true, ...options, config: { dashboardDir, ...options.config } })
  const base = await t.app.listen({ host: '127.0.0.1', port: 0 })
  const key = await t.createKey(scopes, email)
  const user = await t.database.handle.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()
  const token = await t.services.tokens.issue(user.id, t.clock.now())
  const browser = await launchBrowser()
  const page = await browser.newPage()
  const consoleErrors: string[] = []
  page.on('pageerror', (error) => consoleErrors.push(error.message))
  page.on('console', (message) => {
    if (message.type() === 'error' && (expected.counts?.(message.text()) ?? true)) consoleErrors.push(message.text())
  })
  const api = async <T>(method: string, url: string, body?: unknown): Promise<T> => {
    const res = await t.signed(key, method, url, body)
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`)
    return (res.statusCode === 204 ? undefined : res.json()) as T
  }
  const apiJob = async <T>(id: string): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      const res = await t.signed(key, 'GET', `/v1/backtest/jobs/${id}`)
      if (res.statusCode === 429 && attempt < 3) {
        await new Promise((resolve) => setTimeout(resolve, Number(res.headers['retry-after'] ?? 5) * 1000))
        continue
      }
      assert.equal(res.statusCode, 200, res.body)
      return res.json() as T
    }
  }
  return {
    t,
    base,
    key,
    token,
    browser,
    page,
    consoleErrors,
    api,
    apiJob,
    async signIn(path, ready) {
      await page.goto(`${base}${path}`)
      await page.fill('textarea[name=token]', token)
      await page.click('[data-testid=sign-in-submit]')
      await page.waitForSelector(ready)
    },
    async close() {
      await browser.close()
      await t.close()
    },
  }
}
