import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { isPlanActive, parsePlan, parsePlanEnd, setPlan } from '../../src/auth/plans.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'

const DAY = 86_400_000
const NOW = Date.UTC(2026, 5, 15, 12, 0, 0)
// Recorded BTCUSDT hours from the replay exchange's data, well inside its span.
const START = Date.UTC(2024, 0, 1)
const END = Date.UTC(2024, 0, 2)

describe('plan rules', () => {
  it('is active for standard and pro before their end, never for free', () => {
    assert.equal(isPlanActive({ plan: 'standard', plan_expires_at: null }, NOW), true)
    assert.equal(isPlanActive({ plan: 'pro', plan_expires_at: new Date(NOW + 1) }, NOW), true)
    assert.equal(isPlanActive({ plan: 'pro', plan_expires_at: new Date(NOW) }, NOW), false)
    assert.equal(isPlanActive({ plan: 'free', plan_expires_at: null }, NOW), false)
    assert.equal(isPlanActive({ plan: 'free', plan_expires_at: new Date(NOW + DAY) }, NOW), false)
  })

  it('reads --until as the end of a whole UTC day, or an exact time', () => {
    assert.equal(parsePlanEnd('standard', '2026-12-31', NOW)?.toISOString(), '2027-01-01T00:00:00.000Z')
    assert.equal(parsePlanEnd('pro', '2026-07-01T08:30:00Z', NOW)?.toISOString(), '2026-07-01T08:30:00.000Z')
    assert.equal(parsePlanEnd('pro', '2026-07-01T08:30:00+02:00', NOW)?.toISOString(), '2026-07-01T06:30:00.000Z')
    assert.equal(parsePlanEnd('standard', undefined, NOW), null)
  })

  it('refuses a bad plan, a bad or past --until, and an end for the free plan', () => {
    assert.throws(() => parsePlan('gold'), /--plan must be one of free, standard, pro \(got "gold"\)/)
    assert.throws(() => parsePlanEnd('standard', 'next week', NOW), /--until must be an ISO 8601/)
    assert.throws(() => parsePlanEnd('standard', '2026-02-30', NOW), /not a real date/)
    assert.throws(() => parsePlanEnd('standard', '2026-06-14', NOW), /already past; use --plan free/)
    assert.throws(() => parsePlanEnd('free', '2026-12-31', NOW), /free plan never expires/)
  })
})

for (const backend of backends()) {
  describe(`GET /v1/market/klines behind the data key and plan (${backend})`, () => {
    let t: TestApp
    let standard: KeyPair
    let free: KeyPair
    const klines = (query: string, key?: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
      t.app.inject({ method: 'GET', url: `/v1/market/klines${query}`, headers: { ...(key ? { 'x-service-api-key': key } : {}), ...headers } })
    const range = `?symbol=BTCUSDT&interval=1h&startTime=${START}&endTime=${END}`

    function assertError(res: LightMyRequestResponse, status: number, code: string, message: RegExp, field?: string): void {
      assert.equal(res.statusCode, status, res.body)
      const { error } = res.json()
      assert.equal(error.code, code)
      assert.match(error.message, message)
      assert.equal(error.request_id, res.headers['x-request-id'])
      if (field) assert.equal(error.field, field)
    }

    before(async () => {
      t = await startTestApp(backend, {}, { replay: true })
      standard = await t.createKey(['market:read'], 'standard@example.test')
      await setPlan(t.database.handle.db, 'standard@example.test', 'standard', new Date(t.clock.now() + 30 * DAY), t.clock.now())
      free = await t.createKey(['market:read'], 'free@example.test')
    })
    after(() => t.close())

    it('answers Binance’s kline arrays for an active Standard plan, with the key alone', async () => {
      const res = await klines(range, standard.api_key)
      assert.equal(res.statusCode, 200, res.body)
      const upstream = await (await fetch(`${t.replay!.url}/fapi/v1/klines${range}`)).json()
      assert.deepEqual(res.json(), upstream)
      const rows = res.json() as unknown[][]
      assert.equal(rows.length, 25, 'every hour from start to end, both inclusive')
      assert.equal(rows[0]![0], START)
      assert.ok(rows.every((row) => row.length === 12 && typeof row[0] === 'number' && typeof row[1] === 'string'))
      assert.equal(res.headers['x-service-used-weight-1m'], '5')
    })

    it('follows Binance’s limit: default 500, the first `limit` from startTime, lowercase symbols', async () => {
      const three = await klines(`?symbol=btcusdt&interval=1h&startTime=${START}&limit=3`, standard.api_key)
      assert.equal(three.statusCode, 200, three.body)
      assert.deepEqual((three.json() as number[][]).map((row) => row[0]), [START, START + 3_600_000, START + 7_200_000])
      const byDefault = await klines(`?symbol=BTCUSDT&interval=1h&startTime=${START}`, standard.api_key)
      assert.equal((byDefault.json() as unknown[]).length, 500)
      const daily = await klines(`?symbol=BTCUSDT&interval=1d&startTime=${START}&limit=1500`, standard.api_key)
      assert.equal(daily.statusCode, 200)
      assert.ok((daily.json() as unknown[]).length > 500)
    })

    it('answers 401 without a key, with a key that is not ours, and with a revoked key', async () => {
      assertError(await klines(range), 401, 'UNAUTHENTICATED', /needs your data key \(pk_…\) in the X-Service-API-Key header/)
      assertError(await klines(range, 'sk_live_123'), 401, 'UNAUTHENTICATED', /not a data key/)
      assertError(await klines(range, 'pk_000000000000000000000000'), 401, 'UNAUTHENTICATED', /unknown or revoked data key/)
      // A Bearer app token or the signing headers are not the data key.
      const bearer = await t.services.tokens.issue(1, t.clock.now())
      assertError(await klines(range, undefined, { authorization: `Bearer ${bearer}` }), 401, 'UNAUTHENTICATED', /data key/)
      const revoked = await t.createKey(['market:read'], 'standard@example.test')
      assert.equal((await klines(range, revoked.api_key)).statusCode, 200)
      await t.database.handle.db.updateTable('api_keys').set({ revoked_at: new Date(t.clock.now()) }).where('id', '=', revoked.api_key).execute()
      t.services.keys.forget(revoked.api_key)
      assertError(await klines(range, revoked.api_key), 401, 'UNAUTHENTICATED', /unknown or revoked data key/)
    })

    it('answers 403 PLAN_REQUIRED without an active plan, and 403 INSUFFICIENT_PERMISSION without market:read', async () => {
      assertError(await klines(range, free.api_key), 403, 'PLAN_REQUIRED', /needs an active Standard or Pro plan: this account has no paid plan/)
      const unscoped = await t.createKey(['strategies:read'], 'standard@example.test')
      assertError(await klines(range, unscoped.api_key), 403, 'INSUFFICIENT_PERMISSION', /lacks the scope market:read/)
    })

    it('opens for pro without an end date, and closes when a plan ends', async () => {
      const pro = await t.createKey(['market:read'], 'pro@example.test')
      await setPlan(t.database.handle.db, 'pro@example.test', 'pro', null, t.clock.now())
      assert.equal((await klines(range, pro.api_key)).statusCode, 200)
      const ending = await t.createKey(['market:read'], 'ending@example.test')
      const end = new Date(t.clock.now() + 3_600_000)
      await setPlan(t.database.handle.db, 'ending@example.test', 'standard', end, t.clock.now())
      assert.equal((await klines(range, ending.api_key)).statusCode, 200)
      t.clock.advance(3_600_001)
      assertError(await klines(range, ending.api_key), 403, 'PLAN_REQUIRED', new RegExp(`standard plan of this account ended at ${end.toISOString()}`))
      assert.equal((await klines(range, pro.api_key)).statusCode, 200, 'no end date: still open')
    })

    it('refuses bad parameters with Binance’s rules as 400 INVALID_PARAMETER or UNKNOWN_SYMBOL, whatever the plan', async () => {
      for (const key of [standard.api_key, free.api_key]) {
        assertError(await klines('?interval=1h', key), 400, 'INVALID_PARAMETER', /symbol: Field required/, 'symbol')
        assertError(await klines('?symbol=BTCUSDT', key), 400, 'INVALID_PARAMETER', /interval: Field required/, 'interval')
        assertError(await klines('?symbol=BTCUSDT&interval=7m', key), 400, 'INVALID_PARAMETER', /interval/, 'interval')
        assertError(await klines('?symbol=BTCUSDT&interval=1h&limit=1501', key), 400, 'INVALID_PARAMETER', /limit/, 'limit')
        assertError(await klines('?symbol=BTCUSDT&interval=1h&limit=0', key), 400, 'INVALID_PARAMETER', /limit/, 'limit')
        assertError(await klines('?symbol=BTCUSDT&interval=1h&startTime=abc', key), 400, 'INVALID_PARAMETER', /startTime/, 'startTime')
        assertError(await klines('?symbol=BTCUSDT&interval=1h&foo=1', key), 400, 'INVALID_PARAMETER', /foo|additional|Extra/i)
        // A wrong value is named before a missing field.
        assertError(await klines('?limit=0', key), 400, 'INVALID_PARAMETER', /limit/, 'limit')
      }
      assertError(await klines(`?symbol=BTCUSDT&interval=1h&startTime=${END}&endTime=${START}`, standard.api_key), 400, 'INVALID_PARAMETER', /must not be after endTime/, 'startTime')
      assertError(await klines('?symbol=NOPEUSDT&interval=1h', standard.api_key), 400, 'UNKNOWN_SYMBOL', /unknown symbol NOPEUSDT/, 'symbol')
    })
  })
}

describe('setPlan', () => {
  let t: TestApp
  before(async () => {
    t = await startTestApp('pglite')
  })
  after(() => t.close())

  it('creates the user when the email is new, then changes the plan in place', async () => {
    const now = t.clock.now()
    const end = new Date(now + 10 * DAY)
    const created = await setPlan(t.database.handle.db, 'newcomer@example.test', 'standard', end, now)
    assert.deepEqual({ ...created, id: 0 }, { id: 0, email: 'newcomer@example.test', plan: 'standard', plan_expires_at: end.toISOString(), active: true, created: true })
    const changed = await setPlan(t.database.handle.db, 'newcomer@example.test', 'free', null, now)
    assert.deepEqual(changed, { id: created.id, email: 'newcomer@example.test', plan: 'free', plan_expires_at: null, active: false, created: false })
    const rows = await t.database.handle.db.selectFrom('users').select(['plan', 'plan_expires_at']).where('email', '=', 'newcomer@example.test').execute()
    assert.deepEqual(rows, [{ plan: 'free', plan_expires_at: null }])
  })
})
