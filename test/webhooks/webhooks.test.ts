import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'

const RW = ['webhooks:read', 'webhooks:write'] as const
let hosts = 0
/** A distinct https URL per call; with WEBHOOK_ALLOW_PRIVATE_HOSTS nothing resolves or connects at create. */
const url = () => `https://127.0.0.1:9/hook-${++hosts}`

for (const backend of backends()) {
  describe(`webhook subscriptions (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    before(async () => {
      t = await startTestApp(backend, { WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000' })
      key = await t.createKey([...RW])
    })
    after(() => t.close())

    const create = (body: unknown, as = key) => t.signed(as, 'POST', '/v1/webhooks', body)
    const expect400 = async (body: unknown, field: string, message: RegExp) => {
      const res = await create(body)
      assert.equal(res.statusCode, 400, res.body)
      const { error } = res.json()
      assert.equal(error.code, 'INVALID_PARAMETER')
      assert.equal(error.field, field, error.message)
      assert.match(error.message, message)
    }

    it('creates a webhook, shows its secret once, and stores the secret only encrypted', async () => {
      const body = { url: url(), events: ['backtest.job_done', 'strategy.*'], description: 'my bot' }
      const res = await create(body)
      assert.equal(res.statusCode, 200, res.body)
      const created = res.json()
      assert.match(created.id, /^wh_[0-9a-f]{8}$/)
      assert.match(created.secret, /^[A-Za-z0-9]{40}$/)
      assert.match(created._secret_warning, /only/)
      assert.deepEqual(
        { ...created, id: 'x', secret: 'x', _secret_warning: 'x', created_at: 'x' },
        {
          id: 'x',
          url: body.url,
          events: body.events,
          description: 'my bot',
          status: 'active',
          balance_low_threshold: null,
          consecutive_failures: 0,
          last_delivery_at: null,
          last_success_at: null,
          created_at: 'x',
          secret: 'x',
          _secret_warning: 'x',
        },
      )
      assert.equal(created.created_at, new Date(t.clock.now()).toISOString())

      const row = await t.database.handle.db.selectFrom('webhooks').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow()
      assert.ok(!row.secret_enc.includes(created.secret), 'the secret is not stored in plain text')
      assert.equal(t.services.secrets.open(row.secret_enc), created.secret)

      const one = await t.signed(key, 'GET', `/v1/webhooks/${created.id}`)
      assert.equal(one.statusCode, 200, one.body)
      const { secret: _s, _secret_warning: _w, ...shown } = created
      assert.deepEqual(one.json(), shown)
      const list = await t.signed(key, 'GET', '/v1/webhooks')
      assert.ok(!list.body.includes(created.secret) && !list.body.includes('_secret_warning'))
      assert.deepEqual(list.json().data.find((w: { id: string }) => w.id === created.id), shown)
    })

    it('refuses bad bodies with 400 INVALID_PARAMETER naming the field, and stores nothing', async () => {
      const before = await countWebhooks(t)
      await expect400({ events: ['*'] }, 'url', /url/)
      await expect400({ url: 'http://example.com/hook', events: ['*'] }, 'url', /https/)
      await expect400({ url: 'not a url', events: ['*'] }, 'url', /valid/)
      await expect400({ url: 'https://user:pw@example.com/hook', events: ['*'] }, 'url', /password/)
      await expect400({ url: url(), events: [] }, 'events', /events/)
      await expect400({ url: url(), events: ['backtest.job_done', 'strategy.exploded'] }, 'events', /strategy\.exploded/)
      await expect400({ url: url(), events: ['webhook.*'] }, 'events', /webhook\.\*/)
      await expect400({ url: url(), events: ['*'], description: 'x'.repeat(201) }, 'description', /200/)
      await expect400({ url: url(), events: ['account.balance_low'] }, 'balance_low_threshold', /required/)
      for (const bad of ['0', '0.000', '-5', 'abc', '1e3', '']) {
        await expect400({ url: url(), events: ['account.balance_low'], balance_low_threshold: bad }, 'balance_low_threshold', /positive decimal|balance_low_threshold/)
      }
      await expect400({ url: url(), events: ['*'], secret: 'mine' }, 'secret', /./)
      assert.equal(await countWebhooks(t), before)
    })

    it('keeps balance_low_threshold only when the subscription receives account.balance_low', async () => {
      const explicit = (await create({ url: url(), events: ['account.balance_low'], balance_low_threshold: '250.5' })).json()
      assert.equal(explicit.balance_low_threshold, '250.5')
      const wildcard = (await create({ url: url(), events: ['account.*'], balance_low_threshold: '10' })).json()
      assert.equal(wildcard.balance_low_threshold, '10')
      const ignored = await create({ url: url(), events: ['backtest.job_done'], balance_low_threshold: '10' })
      assert.equal(ignored.statusCode, 200, ignored.body)
      assert.equal(ignored.json().balance_low_threshold, null)
      const noThreshold = await create({ url: url(), events: ['*'] })
      assert.equal(noThreshold.statusCode, 200, 'a wildcard does not require the threshold')
    })

    it('answers 409 DUPLICATE_URL for a URL already registered on the account, also when spelled differently', async () => {
      const first = url()
      assert.equal((await create({ url: first, events: ['*'] })).statusCode, 200)
      for (const again of [first, first.replace('https://', 'HTTPS://')]) {
        const res = await create({ url: again, events: ['backtest.*'] })
        assert.equal(res.statusCode, 409, res.body)
        assert.equal(res.json().error.code, 'DUPLICATE_URL')
      }
      const other = await t.createKey([...RW])
      assert.equal((await create({ url: first, events: ['*'] }, other)).statusCode, 200, 'another account may register the same URL')
    })

    it('answers 429 LIMIT_REACHED for the 26th webhook of an account', async () => {
      const user = await t.createKey([...RW])
      for (let i = 0; i < 25; i++) assert.equal((await create({ url: url(), events: ['*'] }, user)).statusCode, 200)
      const res = await create({ url: url(), events: ['*'] }, user)
      assert.equal(res.statusCode, 429, res.body)
      assert.equal(res.json().error.code, 'LIMIT_REACHED')
      assert.match(res.json().error.message, /25/)
      const list = (await t.signed(user, 'GET', '/v1/webhooks?limit=100')).json()
      assert.equal(list.data.length, 25)
    })

    it('lists with status and event filters (wildcards match their concrete events) and pages with a cursor', async () => {
      const user = await t.createKey([...RW])
      const ids: Record<string, string> = {}
      for (const [name, events] of Object.entries({ star: ['*'], strategyAll: ['strategy.*'], deployed: ['strategy.deployed'], backtest: ['backtest.job_done'], error: ['strategy.error'] })) {
        t.clock.advance(1000)
        ids[name] = (await create({ url: url(), events }, user)).json().id
      }
      const patched = await t.signed(user, 'PATCH', `/v1/webhooks/${ids.error}`, { status: 'paused' })
      assert.equal(patched.statusCode, 200, patched.body)
      const names = async (query: string) => {
        const res = await t.signed(user, 'GET', `/v1/webhooks${query}`)
        assert.equal(res.statusCode, 200, res.body)
        return res.json().data.map((w: { id: string }) => Object.keys(ids).find((k) => ids[k] === w.id))
      }
      assert.deepEqual(await names(''), ['error', 'backtest', 'deployed', 'strategyAll', 'star'], 'newest first')
      assert.deepEqual(await names('?event=strategy.deployed'), ['deployed', 'strategyAll', 'star'])
      assert.deepEqual(await names('?event=backtest.job_done'), ['backtest', 'star'])
      assert.deepEqual(await names('?event=strategy.*'), ['error', 'deployed', 'strategyAll', 'star'])
      assert.deepEqual(await names('?event=account.api_key_rotated'), ['star'])
      assert.deepEqual(await names('?event=*'), ['error', 'backtest', 'deployed', 'strategyAll', 'star'])
      assert.deepEqual(await names('?status=paused'), ['error'])
      assert.deepEqual(await names('?status=active&event=strategy.error'), ['strategyAll', 'star'])
      assert.deepEqual(await names('?status=broken'), [])

      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const res = await t.signed(user, 'GET', `/v1/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        assert.equal(res.statusCode, 200, res.body)
        const page = res.json()
        assert.ok(page.data.length <= 2)
        seen.push(...page.data.map((w: { id: string }) => w.id))
        cursor = page.next_cursor
        pages++
      } while (cursor)
      assert.equal(pages, 3)
      assert.deepEqual(seen, [ids.error, ids.backtest, ids.deployed, ids.strategyAll, ids.star])

      for (const [query, field] of [
        ['?event=strategy.exploded', 'event'],
        ['?event=webhook.*', 'event'],
        ['?status=dead', 'status'],
        ['?limit=0', 'limit'],
        ['?limit=101', 'limit'],
        ['?cursor=%%%', 'cursor'],
        ['?cursor=bm90LWEtY3Vyc29y', 'cursor'],
      ] as const) {
        const res = await t.signed(user, 'GET', `/v1/webhooks${query}`)
        assert.equal(res.statusCode, 400, `${query}: ${res.body}`)
        assert.equal(res.json().error.code, 'INVALID_PARAMETER')
        assert.equal(res.json().error.field, field, query)
      }
    })

    it('updates url, events, description and status; reactivation resets consecutive_failures', async () => {
      const created = (await create({ url: url(), events: ['*'], description: 'old' })).json()
      const next = url()
      const res = await t.signed(key, 'PATCH', `/v1/webhooks/${created.id}`, { url: next, events: ['backtest.*'], description: null })
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual([res.json().url, res.json().events, res.json().description], [next, ['backtest.*'], null])

      await t.database.handle.db.updateTable('webhooks').set({ status: 'broken', consecutive_failures: 50 }).where('id', '=', created.id).execute()
      const paused = await t.signed(key, 'PATCH', `/v1/webhooks/${created.id}`, { status: 'paused' })
      assert.equal(paused.statusCode, 409, 'a broken webhook comes back only as active')
      assert.equal(paused.json().error.code, 'INVALID_STATE')
      const active = await t.signed(key, 'PATCH', `/v1/webhooks/${created.id}`, { status: 'active' })
      assert.equal(active.statusCode, 200, active.body)
      assert.deepEqual([active.json().status, active.json().consecutive_failures], ['active', 0])

      for (const [body, field] of [
        [{ status: 'broken' }, 'status'],
        [{}, undefined],
        [{ events: ['nope'] }, 'events'],
        [{ url: 'http://example.com/' }, 'url'],
        [{ events: ['account.balance_low'] }, 'balance_low_threshold'],
      ] as const) {
        const bad = await t.signed(key, 'PATCH', `/v1/webhooks/${created.id}`, body)
        assert.equal(bad.statusCode, 400, `${JSON.stringify(body)}: ${bad.body}`)
        if (field) assert.equal(bad.json().error.field, field)
      }
      const taken = (await create({ url: url(), events: ['*'] })).json()
      const duplicate = await t.signed(key, 'PATCH', `/v1/webhooks/${created.id}`, { url: taken.url })
      assert.equal(duplicate.statusCode, 409)
      assert.equal(duplicate.json().error.code, 'DUPLICATE_URL')
      const after = (await t.signed(key, 'GET', `/v1/webhooks/${created.id}`)).json()
      assert.deepEqual([after.url, after.events], [next, ['backtest.*']], 'refused updates changed nothing')
    })

    it('deletes a webhook; then it is gone', async () => {
      const created = (await create({ url: url(), events: ['*'] })).json()
      const res = await t.signed(key, 'DELETE', `/v1/webhooks/${created.id}`)
      assert.equal(res.statusCode, 204, res.body)
      assert.equal((await t.signed(key, 'GET', `/v1/webhooks/${created.id}`)).statusCode, 404)
      assert.equal((await t.signed(key, 'DELETE', `/v1/webhooks/${created.id}`)).statusCode, 404)
    })

    it("answers 404 for another user's webhook on every route, and changes nothing", async () => {
      const created = (await create({ url: url(), events: ['*'], description: 'mine' })).json()
      const stranger = await t.createKey([...RW])
      const id = created.id
      for (const [method, path, body] of [
        ['GET', `/v1/webhooks/${id}`, undefined],
        ['PATCH', `/v1/webhooks/${id}`, { description: 'theirs' }],
        ['DELETE', `/v1/webhooks/${id}`, undefined],
        ['POST', `/v1/webhooks/${id}/test`, {}],
        ['GET', `/v1/webhooks/${id}/deliveries`, undefined],
        ['GET', '/v1/webhooks/wh_zzzz', undefined],
      ] as const) {
        const res = await t.signed(stranger, method, path, body)
        assert.equal(res.statusCode, 404, `${method} ${path}: ${res.body}`)
        assert.equal(res.json().error.code, 'NOT_FOUND')
      }
      const list = (await t.signed(stranger, 'GET', '/v1/webhooks')).json()
      assert.deepEqual(list.data, [])
      assert.equal((await t.signed(key, 'GET', `/v1/webhooks/${id}`)).json().description, 'mine')
    })

    it('needs webhooks:read to read and webhooks:write to change or test (403 INSUFFICIENT_PERMISSION)', async () => {
      const id = (await create({ url: url(), events: ['*'] })).json().id
      const reader = await t.createKey(['webhooks:read'])
      const writer = await t.createKey(['webhooks:write'])
      const forbidden = [
        [writer, 'GET', '/v1/webhooks', undefined],
        [writer, 'GET', `/v1/webhooks/${id}`, undefined],
        [writer, 'GET', `/v1/webhooks/${id}/deliveries`, undefined],
        [reader, 'POST', '/v1/webhooks', { url: url(), events: ['*'] }],
        [reader, 'PATCH', `/v1/webhooks/${id}`, { description: 'x' }],
        [reader, 'DELETE', `/v1/webhooks/${id}`, undefined],
        [reader, 'POST', `/v1/webhooks/${id}/test`, {}],
      ] as const
      for (const [who, method, path, body] of forbidden) {
        const res = await t.signed(who, method, path, body)
        assert.equal(res.statusCode, 403, `${method} ${path}: ${res.body}`)
        assert.equal(res.json().error.code, 'INSUFFICIENT_PERMISSION')
      }
      const unsigned = await t.app.inject({ method: 'GET', url: '/v1/webhooks' })
      assert.equal(unsigned.statusCode, 401)
    })
  })

  describe(`webhook URLs must reach a public address (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    before(async () => {
      t = await startTestApp(backend, { RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000' })
      key = await t.createKey([...RW])
    })
    after(() => t.close())

    // Literal addresses and names that resolve locally (/etc/hosts), so no test leaves the machine.
    const refused = [
      'https://127.0.0.1/hook',
      'https://127.1.2.3:8443/hook',
      'https://localhost/hook',
      'https://10.1.2.3/hook',
      'https://172.16.0.1/hook',
      'https://192.168.1.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/hook',
      'https://0.0.0.0/hook',
      'https://224.0.0.1/hook',
      'https://255.255.255.255/hook',
      'https://[::1]/hook',
      'https://[::]/hook',
      'https://[fe80::1]/hook',
      'https://[fd00::1]/hook',
      'https://[ff02::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:169.254.169.254]/hook',
      'https://[::ffff:a00:1]/hook',
      'https://[64:ff9b::a00:1]/hook',
      'https://2130706433/hook',
      'https://0x7f.1/hook',
    ]
    for (const target of refused) {
      it(`refuses ${target}`, async () => {
        const res = await t.signed(key, 'POST', '/v1/webhooks', { url: target, events: ['*'] })
        assert.equal(res.statusCode, 400, res.body)
        assert.equal(res.json().error.code, 'INVALID_PARAMETER')
        assert.equal(res.json().error.field, 'url')
      })
    }

    it('refuses a private URL on PATCH too, and keeps the old one', async () => {
      await t.database.handle.db
        .insertInto('webhooks')
        .values({
          id: 'wh_0000abcd',
          user_id: (await t.database.handle.db.selectFrom('api_keys').select('user_id').where('id', '=', key.api_key).executeTakeFirstOrThrow()).user_id,
          url: 'https://93.184.215.14/hook',
          events: ['*'],
          description: null,
          balance_low_threshold: null,
          secret_enc: t.services.secrets.seal('x'),
          last_delivery_at: null,
          last_success_at: null,
          created_at: new Date(),
          updated_at: new Date(),
        })
        .execute()
      const res = await t.signed(key, 'PATCH', '/v1/webhooks/wh_0000abcd', { url: 'https://[::ffff:10.0.0.1]/hook' })
      assert.equal(res.statusCode, 400, res.body)
      assert.equal(res.json().error.field, 'url')
      assert.equal((await t.signed(key, 'GET', '/v1/webhooks/wh_0000abcd')).json().url, 'https://93.184.215.14/hook')
      assert.equal(await countWebhooks(t), 1)
    })
  })
}

async function countWebhooks(t: TestApp): Promise<number> {
  const row = await t.database.handle.db.selectFrom('webhooks').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  return Number(row.n)
}
