import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { findOrCreateUserByEmail } from '../../src/auth/queries.js'
import { recordEvent } from '../../src/events/outbox.js'
import { dispatchRound } from '../../src/webhooks/delivery-queries.js'
import { Lanes } from '../../src/webhooks/lanes.js'
import { backends, openTestDatabase, type TestDatabase } from '../support/database.js'

interface Item {
  webhook_id: string
  n: number
}

/** A send the test settles by hand: each call waits until the test answers it. */
function manualSends() {
  const calls: Array<{ item: Item; answer: (delivered: boolean) => void }> = []
  const send = (item: Item) => new Promise<boolean>((resolve) => calls.push({ item, answer: resolve }))
  const settle = async (delivered = true) => {
    const call = calls.shift()
    assert.ok(call, 'a send is in flight')
    call.answer(delivered)
    await new Promise((resolve) => setImmediate(resolve))
    return call.item
  }
  return { calls, send, settle }
}

describe('webhook lanes', () => {
  it('send one delivery per webhook at a time, in order, webhooks side by side', async () => {
    const { calls, send, settle } = manualSends()
    const lanes = new Lanes<Item>(send, () => assert.fail('nothing is given back'), () => undefined, 10)
    lanes.add([{ webhook_id: 'a', n: 1 }, { webhook_id: 'b', n: 1 }, { webhook_id: 'a', n: 2 }, { webhook_id: 'a', n: 3 }])
    assert.deepEqual(calls.map((c) => `${c.item.webhook_id}${c.item.n}`), ['a1', 'b1'])
    assert.equal(lanes.queued, 2)
    const sent: string[] = []
    while (calls.length > 0) {
      const item = await settle()
      sent.push(`${item.webhook_id}${item.n}`)
    }
    assert.deepEqual(sent, ['a1', 'b1', 'a2', 'a3'])
    assert.equal(lanes.queued, 0)
  })

  it('give back what waits behind a failure, and everything waiting when closed', async () => {
    const { send, settle } = manualSends()
    const given: Array<{ ns: number[]; why: string }> = []
    const lanes = new Lanes<Item>(send, (items, why) => given.push({ ns: items.map((i) => i.n), why }), () => undefined, 10)
    lanes.add([1, 2, 3].map((n) => ({ webhook_id: 'a', n })))
    await settle(false)
    assert.deepEqual(given, [{ ns: [2, 3], why: 'after-failure' }])
    assert.equal(lanes.queued, 0)
    lanes.add([4, 5, 6].map((n) => ({ webhook_id: 'a', n })))
    const closed = lanes.close()
    assert.deepEqual(given[1], { ns: [5, 6], why: 'withdrawn' })
    await settle() // the one in flight finishes
    await closed
    lanes.add([{ webhook_id: 'a', n: 7 }])
    assert.deepEqual(given[2], { ns: [7], why: 'withdrawn' })
  })

  it("give back what waits for a webhook that changed; its delivery in flight and other webhooks' go on", async () => {
    const { calls, send, settle } = manualSends()
    const given: Array<{ ns: string[]; why: string }> = []
    const lanes = new Lanes<Item>(send, (items, why) => given.push({ ns: items.map((i) => `${i.webhook_id}${i.n}`), why }), () => undefined, 10)
    lanes.add([1, 2, 3].map((n) => ({ webhook_id: 'a', n })).concat([1, 2].map((n) => ({ webhook_id: 'b', n }))))
    lanes.drop('a')
    assert.deepEqual(given, [{ ns: ['a2', 'a3'], why: 'withdrawn' }])
    assert.equal(lanes.queued, 1)
    const sent: string[] = []
    while (calls.length > 0) {
      const item = await settle()
      sent.push(`${item.webhook_id}${item.n}`)
    }
    assert.deepEqual(sent, ['a1', 'b1', 'b2'])
  })

  it('report a full lane, and ask for a refill once it is down to half', async () => {
    const { calls, send, settle } = manualSends()
    let progress = 0
    const lanes = new Lanes<Item>(send, () => undefined, () => void progress++, 4)
    lanes.add([1, 2, 3, 4, 5].map((n) => ({ webhook_id: 'slow', n })).concat([{ webhook_id: 'fast', n: 1 }]))
    assert.deepEqual(lanes.full(), ['slow'], 'four wait behind the one in flight')
    assert.equal(lanes.takeRefill(), false)
    assert.deepEqual(await settle(), { webhook_id: 'slow', n: 1 }) // 4 still wait (2 is sent next)
    assert.deepEqual(await settle(), { webhook_id: 'fast', n: 1 })
    assert.deepEqual(await settle(), { webhook_id: 'slow', n: 2 }) // 3 wait
    assert.equal(lanes.takeRefill(), false)
    assert.deepEqual(await settle(), { webhook_id: 'slow', n: 3 }) // 2 wait: half of 4
    assert.equal(lanes.takeRefill(), true)
    assert.equal(lanes.takeRefill(), false, 'once')
    assert.deepEqual(lanes.full(), [])
    assert.equal(progress, 4)
    assert.deepEqual(calls.map((c) => c.item.n), [4])
  })
})

for (const backend of backends()) {
  describe(`a dispatch round (${backend})`, () => {
    let database: TestDatabase
    let userId: number
    before(async () => {
      database = await openTestDatabase(backend)
      const db = database.handle.db
      userId = await findOrCreateUserByEmail(db, 'lanes@example.test')
      const at = new Date()
      for (const id of ['wh_aaaaaa', 'wh_bbbbbb']) {
        await db
          .insertInto('webhooks')
          .values({ id, user_id: userId, url: `https://example.com/${id}`, events: ['*'], secret_enc: 'sealed', created_at: at, updated_at: at })
          .execute()
      }
    })
    after(() => database.close())

    it("leases nothing of a full webhook's: its deliveries wait, due, for a round after the lane has room", async () => {
      const db = database.handle.db
      const now = new Date()
      const until = new Date(now.getTime() + 15_000)
      const eventId = await db.transaction().execute((trx) => recordEvent(trx, { userId, type: 'backtest.job_done', data: { job_id: 'bt_1' }, at: now }))
      const first = await dispatchRound(db, now, 'lease-1', until, { events: 100, due: 100, full: ['wh_aaaaaa'] })
      assert.equal(first.events, 1)
      assert.deepEqual(first.leased.map((d) => [d.webhook_id, d.event_id, d.lease, d.url]), [['wh_bbbbbb', eventId, 'lease-1', 'https://example.com/wh_bbbbbb']])
      const waiting = await db.selectFrom('deliveries').selectAll().where('webhook_id', '=', 'wh_aaaaaa').executeTakeFirstOrThrow()
      assert.deepEqual([waiting.state, waiting.lease, waiting.next_attempt_at?.getTime()], ['pending', null, now.getTime()])

      const still = await dispatchRound(db, now, 'lease-2', until, { events: 100, due: 100, full: ['wh_aaaaaa'] })
      assert.deepEqual([still.events, still.due, still.leased.length], [0, 0, 0])
      const later = await dispatchRound(db, now, 'lease-3', until, { events: 100, due: 100, full: [] })
      assert.equal(later.due, 1)
      assert.deepEqual(later.leased.map((d) => [d.webhook_id, d.event_id, d.lease, d.attempts]), [['wh_aaaaaa', eventId, 'lease-3', 0]])
      assert.deepEqual(later.leased[0]!.event_data, { job_id: 'bt_1' })
    })
  })
}
