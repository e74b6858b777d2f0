import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { SANDBOX_LIMITS } from '../../src/custom-templates/sandbox/limits.js'
import { findCustomVersion } from '../../src/custom-templates/queries.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { BROKEN, MOMENTUM, SMA, SMA_TS } from './modules.js'

const { sourceBytes: MAX_SOURCE_BYTES, templatesPerUser: MAX_TEMPLATES_PER_USER, versionsPerTemplate: MAX_VERSIONS } = SANDBOX_LIMITS
const HEX16 = /^tpl-[0-9a-f]{16}$/
const SHA256 = /^[0-9a-f]{64}$/

for (const backend of backends()) {
  describe(`templates API (${backend})`, () => {
    let t: TestApp
    let key: KeyPair // strategies:read + write
    let other: KeyPair // another user, same scopes
    let readOnly: KeyPair // the same user, strategies:read only
    let noScope: KeyPair // the same user, no scope
    let userId: number
    let otherId: number

    before(async () => {
      t = await startTestApp(backend)
      // Three keys of one user with different scopes, and a second user.
      const owner = `owner-${process.pid}@example.test`
      key = await t.createKey(['strategies:read', 'strategies:write'], owner)
      readOnly = await t.createKey(['strategies:read'], owner)
      noScope = await t.createKey([], owner)
      other = await t.createKey(['strategies:read', 'strategies:write'])
      userId = await userOf(key)
      otherId = await userOf(other)
    })
    after(() => t.close())

    const db = () => t.database.handle.db
    async function userOf(pair: KeyPair): Promise<number> {
      const row = await db().selectFrom('api_keys').select('user_id').where('id', '=', pair.api_key).executeTakeFirstOrThrow()
      return row.user_id
    }
    const stored = async (user: number) =>
      Number((await db().selectFrom('custom_templates').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', user).executeTakeFirstOrThrow()).n)
    const versionRows = async () => Number((await db().selectFrom('custom_template_versions').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n)
    async function create(pair: KeyPair, body: Record<string, unknown>) {
      const res = await t.signed(pair, 'POST', '/v1/templates', body)
      assert.equal(res.statusCode, 201, res.body)
      return res.json()
    }

    describe('POST /v1/templates', () => {
      it('inspects and stores a module as version 1, answering 201 with what inspecting it found', async () => {
        const res = await t.signed(key, 'POST', '/v1/templates', { name: 'my sma', source: SMA, description: 'a port of sma_cross' })
        assert.equal(res.statusCode, 201, res.body)
        const body = res.json()
        assert.match(body.id, HEX16)
        const at = new Date(t.clock.now()).toISOString()
        assert.deepEqual(
          { ...body, sha256: 'checked below' },
          {
            id: body.id,
            custom: true,
            name: 'my sma',
            description: 'a port of sma_cross',
            version: 1,
            language: 'javascript',
            sha256: 'checked below',
            params_schema: {
              type: 'object',
              properties: {
                fast: { type: 'integer', default: 10, minimum: 2, maximum: 500, description: 'fast SMA length' },
                slow: { type: 'integer', default: 30, minimum: 3, maximum: 1000 },
                allow_short: { type: 'boolean', default: false },
              },
              additionalProperties: false,
            },
            defaults: { fast: 10, slow: 30, allow_short: false },
            warmup: 30,
            multi_symbol: false,
            min_symbols: 1,
            max_symbols: 1,
            min_capital: '200',
            created_at: at,
            updated_at: at,
          },
        )
        assert.match(body.sha256, SHA256)
        const row = await db().selectFrom('custom_template_versions').selectAll().where('template_id', '=', body.id).executeTakeFirstOrThrow()
        assert.equal(row.version, 1)
        assert.equal(row.source, SMA, 'the source is stored exactly as uploaded')
        assert.equal(row.sha256, body.sha256)
        assert.equal(row.has_validate, true)
        const template = await db().selectFrom('custom_templates').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow()
        assert.equal(template.user_id, userId)
        assert.equal(template.latest_version, 1)
      })

      it('takes TypeScript (types stripped for the code, the source kept) and multi-symbol modules', async () => {
        const ts = await create(key, { name: 'typed', source: SMA_TS, language: 'typescript' })
        assert.equal(ts.language, 'typescript')
        assert.deepEqual(ts.defaults, { fast: 5, slow: 20 })
        assert.equal(ts.warmup, 20)
        assert.equal(ts.description, null)
        const row = await db().selectFrom('custom_template_versions').select(['source', 'code']).where('template_id', '=', ts.id).executeTakeFirstOrThrow()
        assert.equal(row.source, SMA_TS)
        assert.doesNotMatch(row.code, /interface Params|: number/)
        const multi = await create(key, { name: 'momentum', source: MOMENTUM })
        assert.deepEqual(
          { multi_symbol: multi.multi_symbol, min_symbols: multi.min_symbols, max_symbols: multi.max_symbols, min_capital: multi.min_capital, warmup: multi.warmup },
          { multi_symbol: true, min_symbols: 2, max_symbols: null, min_capital: '1000', warmup: 20 },
        )
      })

      it('takes a source of exactly 256 KiB of UTF-8 and refuses one byte more, counting bytes, not characters', async () => {
        const padded = (bytes: number, filler: string) => {
          const head = `${SMA}// `
          const room = bytes - Buffer.byteLength(head)
          return head + filler.repeat(Math.floor(room / Buffer.byteLength(filler))) + 'x'.repeat(room % Buffer.byteLength(filler))
        }
        const fits = padded(MAX_SOURCE_BYTES, 'x')
        assert.equal(Buffer.byteLength(fits), MAX_SOURCE_BYTES)
        await create(key, { name: 'exactly the limit', source: fits })
        const before = await stored(userId)
        for (const source of [padded(MAX_SOURCE_BYTES + 1, 'x'), padded(MAX_SOURCE_BYTES + 1, 'é')]) {
          assert.ok(source.length <= MAX_SOURCE_BYTES + 1)
          const res = await t.signed(key, 'POST', '/v1/templates', { name: 'too big', source })
          assert.equal(res.statusCode, 400, res.body)
          assert.deepEqual(
            { code: res.json().error.code, field: res.json().error.field },
            { code: 'INVALID_PARAMETER', field: 'source' },
          )
          assert.match(res.json().error.message, new RegExp(`source is ${MAX_SOURCE_BYTES + 1} bytes .*the limit is ${MAX_SOURCE_BYTES} bytes \\(256 KiB\\)`))
        }
        assert.equal(await stored(userId), before)
      })

      it('refuses bad fields with 400 INVALID_PARAMETER naming the field, storing nothing', async () => {
        const cases: [Record<string, unknown>, string][] = [
          [{ source: SMA }, 'name'],
          [{ name: '', source: SMA }, 'name'],
          [{ name: 'n'.repeat(101), source: SMA }, 'name'],
          [{ name: 'x' }, 'source'],
          [{ name: 'x', source: '' }, 'source'],
          [{ name: 'x', source: 42 }, 'source'],
          [{ name: 'x', source: SMA, language: 'python' }, 'language'],
          [{ name: 'x', source: SMA, language: 'TypeScript' }, 'language'],
          [{ name: 'x', source: SMA, description: 'd'.repeat(1001) }, 'description'],
          [{ name: 'x', source: SMA, version: 3 }, 'version'],
        ]
        const before = [await stored(userId), await versionRows()]
        for (const [body, field] of cases) {
          const res = await t.signed(key, 'POST', '/v1/templates', body)
          assert.equal(res.statusCode, 400, `${field}: ${res.body}`)
          assert.equal(res.json().error.code, 'INVALID_PARAMETER')
          assert.equal(res.json().error.field, field, res.body)
        }
        assert.deepEqual([await stored(userId), await versionRows()], before)
      })

      it("passes the sandbox's refusal through as 400 on source, storing nothing", async () => {
        const before = [await stored(userId), await versionRows()]
        for (const source of [BROKEN, 'export const params = {}\n', SMA.replace('default: 10,', 'default: 1,')]) {
          const res = await t.signed(key, 'POST', '/v1/templates', { name: 'bad', source })
          assert.equal(res.statusCode, 400, res.body)
          assert.equal(res.json().error.code, 'INVALID_PARAMETER')
          assert.equal(res.json().error.field, 'source')
          assert.ok(res.json().error.message.length > 0)
        }
        assert.deepEqual([await stored(userId), await versionRows()], before)
      })

      it("says the guide's rule for a number param without bounds, naming the missing bound (issue 35)", async () => {
        const cases: [string, string][] = [
          [SMA.replace(' maximum: 500,', ''), 'params.fast: numbers need both minimum and maximum (fast has no maximum), and the default must lie within them'],
          [SMA.replace(' minimum: 2, maximum: 500,', ''), 'params.fast: numbers need both minimum and maximum (fast has no minimum and no maximum), and the default must lie within them'],
        ]
        for (const [source, message] of cases) {
          assert.notEqual(source, SMA)
          const res = await t.signed(key, 'POST', '/v1/templates', { name: 'unbounded', source })
          assert.equal(res.statusCode, 400, res.body)
          assert.deepEqual([res.json().error.field, res.json().error.message], ['source', message])
        }
      })
    })

    describe('GET /v1/templates', () => {
      it('lists the built-ins unchanged (custom: false), then only the caller’s own at their latest version, without source', async () => {
        const mine = await create(key, { name: 'listed', source: SMA })
        const theirs = await create(other, { name: 'not yours', source: SMA })
        const res = await t.signed(key, 'GET', '/v1/templates')
        assert.equal(res.statusCode, 200, res.body)
        const data = res.json().data as Record<string, unknown>[]
        const builtIns = data.filter((entry) => entry.custom === false)
        assert.equal(builtIns.length, 8)
        assert.deepEqual(data.slice(0, 8), builtIns, 'built-ins come first')
        const sma = builtIns.find((entry) => entry.id === 'sma_cross')!
        assert.deepEqual(sma.defaults, { fast: 10, slow: 30, allow_short: false })
        assert.equal(sma.min_capital, '200')
        assert.equal(sma.multi_symbol, false)
        const momentum = builtIns.find((entry) => entry.id === 'cross_sectional_momentum')!
        assert.deepEqual([momentum.multi_symbol, momentum.min_symbols, momentum.min_capital], [true, 2, '1000'])
        const own = data.slice(8)
        assert.equal(own.length, await liveCount(userId))
        assert.ok(own.every((entry) => entry.custom === true && typeof entry.id === 'string' && HEX16.test(entry.id)))
        assert.ok(own.some((entry) => entry.id === mine.id))
        assert.ok(!data.some((entry) => entry.id === theirs.id), "another user's template is never listed")
        assert.ok(!data.some((entry) => 'source' in entry))
        const created = own.map((entry) => entry.created_at as string)
        assert.deepEqual(created, [...created].sort(), 'oldest first')
        const theirList = (await t.signed(other, 'GET', '/v1/templates')).json().data as { id: string }[]
        assert.deepEqual(
          theirList.filter((entry) => entry.id.startsWith('tpl-')).map((entry) => entry.id),
          [theirs.id],
        )
        assert.ok(res.headers['x-service-used-weight-1m'] !== undefined, 'charged against the weight budget')
      })

      it('needs a signature but no scope', async () => {
        assert.equal((await t.signed(noScope, 'GET', '/v1/templates')).statusCode, 200)
        const unsigned = await t.app.inject({ method: 'GET', url: '/v1/templates' })
        assert.equal(unsigned.statusCode, 401)
        assert.equal(unsigned.json().error.code, 'UNAUTHENTICATED')
      })

      async function liveCount(user: number): Promise<number> {
        const row = await db()
          .selectFrom('custom_templates')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('user_id', '=', user)
          .where('deleted_at', 'is', null)
          .executeTakeFirstOrThrow()
        return Number(row.n)
      }
    })

    describe('GET /v1/templates/{id}', () => {
      it('answers a built-in with its info, and refuses a version for it', async () => {
        const res = await t.signed(readOnly, 'GET', '/v1/templates/sma_cross')
        assert.equal(res.statusCode, 200, res.body)
        const listed = (await t.signed(readOnly, 'GET', '/v1/templates')).json().data.find((entry: { id: string }) => entry.id === 'sma_cross')
        assert.deepEqual(res.json(), listed)
        const versioned = await t.signed(readOnly, 'GET', '/v1/templates/sma_cross?version=1')
        assert.equal(versioned.statusCode, 400, versioned.body)
        assert.equal(versioned.json().error.field, 'version')
      })

      it('answers one of yours with its source and versions; 404 for unknown ids and versions', async () => {
        const created = await create(key, { name: 'detail', source: SMA })
        const res = await t.signed(readOnly, 'GET', `/v1/templates/${created.id}`)
        assert.equal(res.statusCode, 200, res.body)
        assert.deepEqual(res.json(), { ...created, source: SMA, versions: [{ version: 1, sha256: created.sha256, created_at: created.created_at }] })
        for (const url of [`/v1/templates/${created.id}?version=2`, '/v1/templates/tpl-0000000000000000', '/v1/templates/no_such_template', '/v1/templates/tpl-%00']) {
          const missing = await t.signed(key, 'GET', url)
          assert.equal(missing.statusCode, 404, `${url}: ${missing.body}`)
          assert.equal(missing.json().error.code, 'NOT_FOUND')
        }
        for (const url of [`/v1/templates/${created.id}?version=0`, `/v1/templates/${created.id}?version=${MAX_VERSIONS + 1}`, `/v1/templates/${created.id}?version=1.5`]) {
          const bad = await t.signed(key, 'GET', url)
          assert.equal(bad.statusCode, 400, `${url}: ${bad.body}`)
          assert.equal(bad.json().error.field, 'version')
        }
      })

      it('needs strategies:read', async () => {
        const res = await t.signed(noScope, 'GET', '/v1/templates/sma_cross')
        assert.equal(res.statusCode, 403, res.body)
        assert.equal(res.json().error.code, 'INSUFFICIENT_PERMISSION')
      })
    })

    describe('PUT /v1/templates/{id}', () => {
      it('uploads a new version (inspected first), keeping the older ones readable', async () => {
        const first = await create(key, { name: 'evolving', source: SMA_TS, language: 'typescript', description: 'v1' })
        t.clock.advance(1000)
        const changed = SMA_TS.replace('default: 20', 'default: 25')
        const res = await t.signed(key, 'PUT', `/v1/templates/${first.id}`, { source: changed, name: 'evolved', description: null })
        assert.equal(res.statusCode, 200, res.body)
        const second = res.json()
        assert.equal(second.id, first.id)
        assert.equal(second.version, 2)
        assert.equal(second.name, 'evolved')
        assert.equal(second.description, null)
        assert.equal(second.language, 'typescript', "an upload without language keeps the template's")
        assert.equal(second.warmup, 25)
        assert.equal(second.created_at, first.created_at)
        assert.equal(second.updated_at, new Date(t.clock.now()).toISOString())
        assert.notEqual(second.sha256, first.sha256)
        const latest = (await t.signed(key, 'GET', `/v1/templates/${first.id}`)).json()
        assert.equal(latest.source, changed)
        assert.deepEqual(
          latest.versions.map((v: { version: number; sha256: string }) => [v.version, v.sha256]),
          [
            [1, first.sha256],
            [2, second.sha256],
          ],
        )
        const older = (await t.signed(key, 'GET', `/v1/templates/${first.id}?version=1`)).json()
        assert.deepEqual([older.version, older.source, older.warmup, older.name], [1, SMA_TS, 20, 'evolved'])
        const listed = (await t.signed(key, 'GET', '/v1/templates')).json().data.find((entry: { id: string }) => entry.id === first.id)
        assert.equal(listed.version, 2)
        const third = await t.signed(key, 'PUT', `/v1/templates/${first.id}`, { source: SMA, language: 'javascript' })
        assert.deepEqual([third.json().version, third.json().language, third.json().name], [3, 'javascript', 'evolved'])
      })

      it('refuses a module the sandbox refuses, a too-large source and bad fields, keeping the template as it was', async () => {
        const created = await create(key, { name: 'kept', source: SMA })
        const cases: [Record<string, unknown>, string][] = [
          [{ source: BROKEN }, 'source'],
          [{ source: 'x'.repeat(MAX_SOURCE_BYTES + 1) }, 'source'],
          [{ name: 'no source' }, 'source'],
          [{ source: SMA, language: 'rust' }, 'language'],
          [{ source: SMA, name: '' }, 'name'],
          [{ source: SMA, extra: true }, 'extra'],
        ]
        for (const [body, field] of cases) {
          const res = await t.signed(key, 'PUT', `/v1/templates/${created.id}`, body)
          assert.equal(res.statusCode, 400, `${field}: ${res.body}`)
          assert.equal(res.json().error.field, field, res.body)
        }
        const read = (await t.signed(key, 'GET', `/v1/templates/${created.id}`)).json()
        assert.deepEqual([read.version, read.name, read.versions.length], [1, 'kept', 1])
      })

      it('answers 409 INVALID_STATE for a built-in id and 404 for an unknown one', async () => {
        const builtIn = await t.signed(key, 'PUT', '/v1/templates/sma_cross', { source: SMA })
        assert.equal(builtIn.statusCode, 409, builtIn.body)
        assert.equal(builtIn.json().error.code, 'INVALID_STATE')
        assert.match(builtIn.json().error.message, /built-in/)
        const unknown = await t.signed(key, 'PUT', '/v1/templates/tpl-0123456789abcdef', { source: SMA })
        assert.equal(unknown.statusCode, 404, unknown.body)
      })

      it('needs strategies:write', async () => {
        const created = await create(key, { name: 'scoped', source: SMA })
        const res = await t.signed(readOnly, 'PUT', `/v1/templates/${created.id}`, { source: SMA })
        assert.equal(res.statusCode, 403, res.body)
        assert.equal((await t.signed(key, 'GET', `/v1/templates/${created.id}`)).json().version, 1)
      })
    })

    describe('DELETE /v1/templates/{id}', () => {
      it('soft-deletes: 204, then 404 everywhere and gone from the list, the rows kept', async () => {
        const created = await create(key, { name: 'doomed', source: SMA })
        const res = await t.signed(key, 'DELETE', `/v1/templates/${created.id}`)
        const deletedAt = new Date(t.clock.now()).toISOString()
        assert.equal(res.statusCode, 204, res.body)
        assert.equal(res.body, '')
        for (const [method, body] of [['GET'], ['PUT', { source: SMA }], ['DELETE']] as const) {
          const again = await t.signed(key, method, `/v1/templates/${created.id}`, body)
          assert.equal(again.statusCode, 404, `${method}: ${again.body}`)
        }
        const listed = (await t.signed(key, 'GET', '/v1/templates')).json().data as { id: string }[]
        assert.ok(!listed.some((entry) => entry.id === created.id))
        const row = await db().selectFrom('custom_templates').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow()
        assert.equal(row.deleted_at?.toISOString(), deletedAt)
        assert.equal((await db().selectFrom('custom_template_versions').select('version').where('template_id', '=', created.id).execute()).length, 1)
      })

      it('answers 409 INVALID_STATE while a deployed strategy uses the template, and deletes once it is paused', async () => {
        const created = await create(key, { name: 'in use', source: SMA })
        const strategyId = `strat_${created.id.slice(4, 12)}`
        await db()
          .insertInto('strategies')
          .values({
            id: strategyId,
            user_id: userId,
            name: 'runs a custom template',
            template_id: created.id,
            template_version: 1,
            params: JSON.stringify(created.defaults),
            symbols: ['BTCUSDT'],
            timeframe: '1h',
            capital: '1000',
            leverage: 1,
            status: 'deployed',
            deployed_at: new Date(t.clock.now()),
            created_at: new Date(t.clock.now()),
            updated_at: new Date(t.clock.now()),
            deleted_at: null,
          })
          .execute()
        const refused = await t.signed(key, 'DELETE', `/v1/templates/${created.id}`)
        assert.equal(refused.statusCode, 409, refused.body)
        assert.equal(refused.json().error.code, 'INVALID_STATE')
        assert.match(refused.json().error.message, /deployed strategy/)
        assert.equal((await t.signed(key, 'GET', `/v1/templates/${created.id}`)).statusCode, 200, 'still there')
        await db().updateTable('strategies').set({ status: 'paused' }).where('id', '=', strategyId).execute()
        assert.equal((await t.signed(key, 'DELETE', `/v1/templates/${created.id}`)).statusCode, 204)
      })

      it('answers 409 INVALID_STATE for a built-in id and needs strategies:write', async () => {
        const builtIn = await t.signed(key, 'DELETE', '/v1/templates/sma_cross')
        assert.equal(builtIn.statusCode, 409, builtIn.body)
        assert.equal(builtIn.json().error.code, 'INVALID_STATE')
        const created = await create(key, { name: 'guarded', source: SMA })
        assert.equal((await t.signed(readOnly, 'DELETE', `/v1/templates/${created.id}`)).statusCode, 403)
        assert.equal((await t.signed(key, 'GET', `/v1/templates/${created.id}`)).statusCode, 200)
      })
    })

    describe("another user's template", () => {
      it('is 404 NOT_FOUND on GET, PUT and DELETE, exactly as an unknown id, and stays unchanged', async () => {
        const theirs = await create(other, { name: 'private', source: SMA, description: 'secret sauce' })
        const unknownId = 'tpl-ffffffffffffffff'
        for (const [method, body] of [['GET'], ['PUT', { source: SMA_TS, language: 'typescript', name: 'taken' }], ['DELETE']] as const) {
          const res = await t.signed(key, method, `/v1/templates/${theirs.id}`, body)
          assert.equal(res.statusCode, 404, `${method}: ${res.body}`)
          assert.equal(res.json().error.code, 'NOT_FOUND')
          assert.doesNotMatch(res.body, /secret sauce|onBar|private/, 'nothing of the template in the answer')
          const unknown = await t.signed(key, method, `/v1/templates/${unknownId}`, body)
          assert.equal(unknown.statusCode, 404)
          assert.equal(res.json().error.message.replace(theirs.id, 'ID'), unknown.json().error.message.replace(unknownId, 'ID'))
        }
        const versioned = await t.signed(key, 'GET', `/v1/templates/${theirs.id}?version=1`)
        assert.equal(versioned.statusCode, 404)
        const read = (await t.signed(other, 'GET', `/v1/templates/${theirs.id}`)).json()
        assert.deepEqual([read.name, read.version, read.source], ['private', 1, SMA])
        assert.equal(await findCustomVersion(db(), userId, theirs.id), undefined)
      })
    })

    describe('unsigned requests', () => {
      it('are refused with 401 on every route', async () => {
        const created = await create(key, { name: 'unsigned', source: SMA })
        for (const [method, url, payload] of [
          ['POST', '/v1/templates', { name: 'x', source: SMA }],
          ['GET', `/v1/templates/${created.id}`],
          ['PUT', `/v1/templates/${created.id}`, { source: SMA }],
          ['DELETE', `/v1/templates/${created.id}`],
        ] as const) {
          const res = await t.app.inject({ method, url, ...(payload ? { payload } : {}) })
          assert.equal(res.statusCode, 401, `${method} ${url}: ${res.body}`)
        }
        const bad = await t.signed({ ...key, api_secret: 'wrong' }, 'GET', `/v1/templates/${created.id}`)
        assert.equal(bad.statusCode, 401)
        assert.equal((await t.signed(key, 'GET', `/v1/templates/${created.id}`)).json().version, 1)
      })

      it('POST needs strategies:write', async () => {
        assert.equal(await userOf(readOnly), userId)
        const before = await stored(userId)
        const res = await t.signed(readOnly, 'POST', '/v1/templates', { name: 'x', source: SMA })
        assert.equal(res.statusCode, 403, res.body)
        assert.equal(res.json().error.code, 'INSUFFICIENT_PERMISSION')
        assert.equal(await stored(userId), before)
      })
    })

    describe('limits', () => {
      it(`refuses a template beyond ${MAX_TEMPLATES_PER_USER} with 429 LIMIT_REACHED; deleted ones do not count`, async () => {
        const full = await t.createKey(['strategies:read', 'strategies:write'])
        const fullId = await userOf(full)
        const first = await create(full, { name: 'real one', source: SMA })
        const at = new Date(t.clock.now())
        await db()
          .insertInto('custom_templates')
          .values(
            Array.from({ length: MAX_TEMPLATES_PER_USER - 1 }, (_, i) => ({
              id: `tpl-${i.toString(16).padStart(16, '0')}`,
              user_id: fullId,
              name: `filler ${i}`,
              latest_version: 1,
              created_at: at,
              updated_at: at,
            })),
          )
          .execute()
        const refused = await t.signed(full, 'POST', '/v1/templates', { name: 'one too many', source: SMA })
        assert.equal(refused.statusCode, 429, refused.body)
        assert.equal(refused.json().error.code, 'LIMIT_REACHED')
        assert.match(refused.json().error.message, new RegExp(`limit is ${MAX_TEMPLATES_PER_USER}`))
        assert.equal(await stored(fullId), MAX_TEMPLATES_PER_USER)
        assert.equal((await t.signed(full, 'DELETE', `/v1/templates/${first.id}`)).statusCode, 204)
        await create(full, { name: 'fits again', source: SMA })
      })

      it(`refuses a version beyond ${MAX_VERSIONS} with 429 LIMIT_REACHED`, async () => {
        const created = await create(key, { name: 'many versions', source: SMA })
        await sql`insert into custom_template_versions
            select template_id, ${MAX_VERSIONS}, language, source, code, sha256, params_schema, defaults, multi_symbol, warmup, has_validate, created_at
            from custom_template_versions where template_id = ${created.id}`.execute(db())
        await db().updateTable('custom_templates').set({ latest_version: MAX_VERSIONS }).where('id', '=', created.id).execute()
        const res = await t.signed(key, 'PUT', `/v1/templates/${created.id}`, { source: SMA })
        assert.equal(res.statusCode, 429, res.body)
        assert.equal(res.json().error.code, 'LIMIT_REACHED')
        assert.equal((await t.signed(key, 'GET', `/v1/templates/${created.id}`)).json().version, MAX_VERSIONS)
      })
    })

    describe('findCustomVersion (for backtests and runs)', () => {
      it('loads a version of your own template ready to run, and nothing of anyone else’s', async () => {
        const created = await create(key, { name: 'loadable', source: SMA })
        await t.signed(key, 'PUT', `/v1/templates/${created.id}`, { source: SMA_TS, language: 'typescript', name: 'loaded' })
        const latest = await findCustomVersion(db(), userId, created.id)
        assert.ok(latest)
        assert.deepEqual({ ...latest, compiled: { ...latest.compiled, code: typeof latest.compiled.code } }, {
          id: created.id,
          version: 2,
          name: 'loaded',
          compiled: { code: 'string', sha256: latest.compiled.sha256, file: 'loaded.ts' },
          description: {
            paramsSchema: {
              type: 'object',
              properties: { fast: { type: 'integer', default: 5, minimum: 2, maximum: 50 }, slow: { type: 'integer', default: 20, minimum: 3, maximum: 200 } },
              additionalProperties: false,
            },
            defaults: { fast: 5, slow: 20 },
            multiSymbol: false,
            warmup: 20,
            hasValidate: false,
            // Its upload's smoke run, per bar: the job budget is derived from it (issue 34).
            smokeUsPerBar: latest.description.smokeUsPerBar,
          },
        })
        assert.ok(latest.description.smokeUsPerBar! > 0, String(latest.description.smokeUsPerBar))
        const first = await findCustomVersion(db(), userId, created.id, 1)
        assert.deepEqual([first?.version, first?.compiled.sha256, first?.description.hasValidate, first?.name], [1, created.sha256, true, 'loaded'])
        for (const [user, id, version] of [
          [otherId, created.id, undefined],
          [userId, created.id, 3],
          [userId, created.id, 0],
          [userId, created.id, 2 ** 40],
          [userId, 'sma_cross', undefined],
          [userId, 'tpl-\u0000', undefined],
        ] as const) {
          assert.equal(await findCustomVersion(db(), user, id, version), undefined, `${user} ${id} ${version}`)
        }
        await t.signed(key, 'DELETE', `/v1/templates/${created.id}`)
        assert.equal(await findCustomVersion(db(), userId, created.id), undefined)
      })
    })

    it('is in the OpenAPI document under the templates tag', async () => {
      const paths = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json().paths
      for (const [path, method] of [
        ['/v1/templates', 'get'],
        ['/v1/templates', 'post'],
        ['/v1/templates/{id}', 'get'],
        ['/v1/templates/{id}', 'put'],
        ['/v1/templates/{id}', 'delete'],
      ] as const) {
        assert.deepEqual(paths[path]?.[method]?.tags, ['templates'], `${method} ${path}`)
        assert.ok(paths[path][method].summary)
      }
    })
  })
}
