import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'

const NAIVE_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/

for (const backend of backends()) {
  describe(`public strategy CRUD (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend)
    })
    after(() => t.close())

    const post = (payload: unknown) => t.app.inject({ method: 'POST', url: '/strategies', payload: payload as object })
    const put = (id: number | string, payload: unknown) => t.app.inject({ method: 'PUT', url: `/strategies/${id}`, payload: payload as object })

    it('lists [] when there are none', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/strategies' })
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), [])
    })

    it('creates a record with an integer id, null optional fields and zone-less timestamps', async () => {
      const res = await post({ name: 'alpha', author: 'ann', bot_name: 'bot-1' })
      assert.equal(res.statusCode, 200)
      const body = res.json()
      assert.equal(typeof body.id, 'number')
      assert.equal(body.name, 'alpha')
      assert.equal(body.author, 'ann')
      assert.equal(body.description, null)
      assert.equal(body.bot_name, 'bot-1')
      assert.match(body.created_at, NAIVE_ISO)
      assert.equal(body.created_at, body.updated_at)
      // UTC: within a minute of the wall clock read as UTC.
      assert.ok(Math.abs(Date.parse(`${body.created_at}Z`) - Date.now()) < 60_000)
    })

    it('refuses a taken name with 400 and the original detail text, creating nothing', async () => {
      await post({ name: 'dup' })
      const before = (await t.app.inject({ method: 'GET', url: '/strategies' })).json().length
      const res = await post({ name: 'dup', author: 'other' })
      assert.equal(res.statusCode, 400)
      assert.deepEqual(res.json(), { detail: '策略名称已存在' })
      assert.equal((await t.app.inject({ method: 'GET', url: '/strategies' })).json().length, before)
    })

    it('answers 422 in FastAPI shape for a missing or wrong-typed name', async () => {
      const missing = await post({ author: 'x' })
      assert.equal(missing.statusCode, 422)
      assert.deepEqual(missing.json().detail[0].loc, ['body', 'name'])
      assert.equal(missing.json().detail[0].type, 'missing')
      const wrong = await post({ name: 42 })
      assert.equal(wrong.statusCode, 422)
      assert.deepEqual(wrong.json().detail[0].loc, ['body', 'name'])
    })

    it('gets one by id; 404 with 策略不存在 when missing; 422 for a non-integer id', async () => {
      const id = (await post({ name: 'gettable' })).json().id
      const res = await t.app.inject({ method: 'GET', url: `/strategies/${id}` })
      assert.equal(res.statusCode, 200)
      assert.equal(res.json().name, 'gettable')
      for (const missing of [999999, 99999999999]) {
        const notFound = await t.app.inject({ method: 'GET', url: `/strategies/${missing}` })
        assert.equal(notFound.statusCode, 404)
        assert.deepEqual(notFound.json(), { detail: '策略不存在' })
      }
      for (const bad of ['abc', '1.5']) {
        const invalid = await t.app.inject({ method: 'GET', url: `/strategies/${bad}` })
        assert.equal(invalid.statusCode, 422)
        assert.deepEqual(invalid.json().detail[0].loc, ['path', 'strategy_id'])
      }
    })

    it('lists newest first', async () => {
      const list = (await t.app.inject({ method: 'GET', url: '/strategies' })).json() as { id: number; created_at: string }[]
      assert.ok(list.length >= 3)
      for (let i = 1; i < list.length; i++) {
        const [newer, older] = [list[i - 1]!, list[i]!]
        assert.ok(newer.created_at > older.created_at || (newer.created_at === older.created_at && newer.id > older.id))
      }
    })

    it('PUT changes given fields, keeps omitted and null ones, refreshes updated_at, never the name', async () => {
      const created = (await post({ name: 'editable', author: 'ann', description: 'first' })).json()
      const res = await put(created.id, { description: 'second', author: null, exit_condition: 'rsi>70' })
      assert.equal(res.statusCode, 200)
      const updated = res.json()
      assert.equal(updated.name, 'editable')
      assert.equal(updated.author, 'ann')
      assert.equal(updated.description, 'second')
      assert.equal(updated.exit_condition, 'rsi>70')
      assert.equal(updated.created_at, created.created_at)
      assert.ok(updated.updated_at > created.updated_at, `${updated.updated_at} > ${created.updated_at}`)
      const sameName = await put(created.id, { name: 'editable', bot_name: 'b' })
      assert.equal(sameName.statusCode, 200)
      assert.equal(sameName.json().bot_name, 'b')
    })

    it('PUT of the record as read, edited (another name included), changes the editable fields and keeps the name', async () => {
      const created = (await post({ name: 'round-trip', author: 'ann' })).json()
      const read = (await t.app.inject({ method: 'GET', url: `/strategies/${created.id}` })).json()
      const res = await put(created.id, { ...read, name: 'renamed', description: 'edited', id: 1, created_at: 'x', updated_at: 'y' })
      assert.equal(res.statusCode, 200)
      const updated = res.json()
      assert.equal(updated.name, 'round-trip')
      assert.equal(updated.description, 'edited')
      assert.equal(updated.author, 'ann')
      assert.equal(updated.id, created.id)
      assert.equal(updated.created_at, created.created_at)
      assert.ok(updated.updated_at > read.updated_at)
      const stored = (await t.app.inject({ method: 'GET', url: `/strategies/${created.id}` })).json()
      assert.deepEqual(stored, updated)
      assert.equal((await t.app.inject({ method: 'GET', url: '/strategies' })).json().filter((row: { name: string }) => row.name === 'renamed').length, 0)
    })

    it('PUT still refuses unknown fields and a wrong-typed name with 422, changing nothing', async () => {
      const created = (await post({ name: 'strict', author: 'ann' })).json()
      const unknown = await put(created.id, { author: 'bob', levrage: 3 })
      assert.equal(unknown.statusCode, 422)
      assert.equal(unknown.json().detail[0].type, 'extra_forbidden')
      const badName = await put(created.id, { author: 'bob', name: 5 })
      assert.equal(badName.statusCode, 422)
      assert.deepEqual(badName.json().detail[0].loc, ['body', 'name'])
      assert.deepEqual((await t.app.inject({ method: 'GET', url: `/strategies/${created.id}` })).json(), created)
    })

    it('PUT answers 404 for a missing id and 422 for a wrong-typed field, changing nothing', async () => {
      const created = (await post({ name: 'stable', author: 'ann' })).json()
      assert.equal((await put(123456789, { author: 'x' })).statusCode, 404)
      const wrong = await put(created.id, { author: 7 })
      assert.equal(wrong.statusCode, 422)
      assert.deepEqual(wrong.json().detail[0].loc, ['body', 'author'])
      const after = (await t.app.inject({ method: 'GET', url: `/strategies/${created.id}` })).json()
      assert.deepEqual(after, created)
    })
  })
}
