import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { claimKey, MemorySharedState, PostgresSharedState, type SharedState } from '../../src/http/shared-state.js'
import { backends, openTestDatabase, type TestDatabase } from '../support/database.js'

const WINDOW = { windowMs: 60_000 }
const NOW = Date.UTC(2026, 0, 1, 12, 0, 10) // 10 s into a window
const sig = (n: number) => ({ key: `sig:test-${n}`, ttlMs: 10_000 })
const digestOf = (n: number) => crypto.createHash('sha256').update(String(n)).digest()

for (const backend of backends()) {
  // Two PostgresSharedState instances over one database stand for two nodes; MemorySharedState for embedded.
  describe(`shared admission state (${backend})`, () => {
    let database: TestDatabase
    let nodes: SharedState[]
    before(async () => {
      database = await openTestDatabase(backend)
      nodes = [new PostgresSharedState(database.handle.db, database.handle.pool), new PostgresSharedState(database.handle.db, database.handle.pool)]
    })
    after(() => database.close())

    it('admits each signature once across nodes, however many present it at the same moment', async () => {
      const attempts = Array.from({ length: 60 }, (_, i) => nodes[i % 2]!.admit(sig(i % 20), { bucket: 'k1', weight: 1, ...WINDOW }, NOW))
      const outcomes = await Promise.all(attempts)
      const claimed = outcomes.map((o, i) => [i % 20, o.claimed] as const).filter(([, ok]) => ok).map(([n]) => n)
      assert.deepEqual(claimed.sort((x, y) => x - y), Array.from({ length: 20 }, (_, i) => i), 'each of the 20 signatures exactly once')
      for (const outcome of outcomes) if (!outcome.claimed) assert.equal(outcome.used, undefined, 'a refused claim charges nothing')
      // Only the 20 admitted requests were charged, and each saw its own running total.
      const used = outcomes.flatMap((o) => (o.used === undefined ? [] : [o.used])).sort((x, y) => x - y)
      assert.deepEqual(used, Array.from({ length: 20 }, (_, i) => i + 1))
    })

    it("admits a signature given by its bytes once across nodes, keyed by its lowercase hex", async () => {
      const claim = { digest: digestOf(7), ttlMs: 10_000 }
      assert.equal(claimKey(claim), `sig:${digestOf(7).toString('hex')}`)
      assert.equal((await nodes[0]!.admit(claim, { bucket: 'd', weight: 1, ...WINDOW }, NOW)).claimed, true)
      assert.equal((await nodes[1]!.admit({ digest: digestOf(7), ttlMs: 10_000 }, { bucket: 'd', weight: 1, ...WINDOW }, NOW)).claimed, false)
      assert.equal((await nodes[1]!.admit({ key: claimKey(claim), ttlMs: 10_000 }, { bucket: 'd', weight: 1, ...WINDOW }, NOW)).claimed, false, 'the same key as a key')
    })

    it('keeps weight totals exact per bucket and window under concurrent charges from two nodes', async () => {
      const charges = Array.from({ length: 90 }, (_, i) => ({ bucket: `b${i % 3}`, weight: 1 + (i % 4) }))
      const outcomes = await Promise.all(charges.map((charge, i) => nodes[i % 2]!.admit(undefined, { ...charge, ...WINDOW }, NOW)))
      for (const bucket of ['b0', 'b1', 'b2']) {
        const mine = charges.map((c, i) => ({ ...c, used: outcomes[i]!.used! })).filter((c) => c.bucket === bucket)
        const total = mine.reduce((sum, c) => sum + c.weight, 0)
        // Replaying the charges in the order of their totals must give exactly those totals.
        let running = 0
        for (const c of [...mine].sort((x, y) => x.used - y.used)) {
          running += c.weight
          assert.equal(c.used, running, `${bucket}: totals are a sequence of single charges`)
        }
        assert.equal(running, total)
        assert.equal(await nodes[0]!.addWeight(bucket, 0, WINDOW.windowMs, NOW), total, 'the stored total')
      }
    })

    it('charges a new window afresh, and lets a claim be made again once it expired', async () => {
      assert.equal(await nodes[0]!.addWeight('fresh', 5, WINDOW.windowMs, NOW), 5)
      assert.equal(await nodes[1]!.addWeight('fresh', 5, WINDOW.windowMs, NOW + 60_000), 5, 'the next window starts at 0')
      assert.equal((await nodes[0]!.admit(sig(99), { bucket: 'x', weight: 1, ...WINDOW }, NOW)).claimed, true)
      assert.equal((await nodes[1]!.admit(sig(99), { bucket: 'x', weight: 1, ...WINDOW }, NOW + 9_999)).claimed, false)
      assert.equal((await nodes[1]!.admit(sig(99), { bucket: 'x', weight: 1, ...WINDOW }, NOW + 10_000)).claimed, true)
    })

    it('tells a repeated claim how long the held one still runs, on any node', async () => {
      assert.equal(await nodes[0]!.claimOrWait('poll:1:bt_1', 5000, NOW), 0)
      assert.equal(await nodes[1]!.claimOrWait('poll:1:bt_1', 5000, NOW + 3400), 1600)
      assert.equal(await nodes[0]!.claimOrWait('poll:1:bt_1', 5000, NOW + 4999), 1)
      assert.equal(await nodes[1]!.claimOrWait('poll:1:bt_1', 5000, NOW + 5000), 0, 'claimed afresh')
      assert.equal(await nodes[0]!.claimOrWait('poll:1:bt_1', 5000, NOW + 5001), 4999)
    })
  })
}

describe('shared admission state (memory)', () => {
  it('admits a signature once and charges only admitted requests', async () => {
    const state = new MemorySharedState()
    assert.deepEqual(await state.admit(sig(1), { bucket: 'k', weight: 3, ...WINDOW }, NOW), { claimed: true, used: 3 })
    assert.deepEqual(await state.admit(sig(1), { bucket: 'k', weight: 3, ...WINDOW }, NOW), { claimed: false, used: undefined })
    assert.deepEqual(await state.admit(undefined, { bucket: 'k', weight: 2, ...WINDOW }, NOW), { claimed: true, used: 5 })
  })

  it("admits a signature given by its bytes (authenticate's claims) once until its claim expires, charging only admitted requests", async () => {
    const state = new MemorySharedState()
    const signed = (n: number) => ({ digest: digestOf(n), ttlMs: 10_000 })
    assert.deepEqual(await state.admit(signed(1), { bucket: 'k', weight: 3, ...WINDOW }, NOW), { claimed: true, used: 3 })
    assert.deepEqual(await state.admit(signed(1), { bucket: 'k', weight: 3, ...WINDOW }, NOW + 9_999), { claimed: false, used: undefined })
    assert.deepEqual(await state.admit(signed(2), { bucket: 'k', weight: 3, ...WINDOW }, NOW + 9_999), { claimed: true, used: 6 })
    assert.deepEqual(await state.admit(signed(1), { bucket: 'k', weight: 3, ...WINDOW }, NOW + 10_000), { claimed: true, used: 9 }, 'claimed afresh once expired')
  })

  it('tells a repeated claim how long the held one still runs', async () => {
    const state = new MemorySharedState()
    assert.equal(await state.claimOrWait('poll:1:bt_1', 5000, NOW), 0)
    assert.equal(await state.claimOrWait('poll:1:bt_1', 5000, NOW + 3400), 1600)
    assert.equal(await state.claimOnce('poll:1:bt_1', 5000, NOW + 4999), false)
    assert.equal(await state.claimOrWait('poll:1:bt_1', 5000, NOW + 5000), 0)
  })

  it('keeps a claim made afresh when the expired one it replaced is dropped', async () => {
    const state = new MemorySharedState()
    assert.equal(await state.claimOrWait('long', 10_000, NOW), 0)
    assert.equal(await state.claimOrWait('a', 1000, NOW), 0)
    // 'a' expired, but its first claim is still queued behind 'long' when it is claimed again, for longer.
    assert.equal(await state.claimOrWait('a', 20_000, NOW + 1000), 0)
    assert.equal(await state.claimOrWait('b', 1000, NOW + 10_000), 0, "drops 'long' and the first claim of 'a'")
    assert.equal(await state.claimOrWait('a', 20_000, NOW + 10_000), 11_000, "'a' is still held by its second claim")
    assert.equal(await state.claimOrWait('long', 10_000, NOW + 10_000), 0, "'long' expired")
  })

  it('refuses every repeat among many claims as the expired ones are dropped', async () => {
    const state = new MemorySharedState()
    for (let i = 0; i < 5000; i++) {
      const now = NOW + i
      assert.equal(await state.claimOrWait(`sig:${i}`, 1000, now), 0)
      if (i >= 999) assert.equal(await state.claimOrWait(`sig:${i - 999}`, 1000, now), 1, `sig:${i - 999} is held 1 ms more`)
    }
    assert.equal(await state.claimOrWait('sig:4000', 1000, NOW + 5000), 0, 'sig:4000 expired at 5000')
    assert.equal(await state.claimOrWait('sig:4001', 1000, NOW + 5000), 1)
  })
})
