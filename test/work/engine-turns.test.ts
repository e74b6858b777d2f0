import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compileModule } from '../../src/custom-templates/sandbox/compile-module.js'
import { EngineCancelled, EnginePool, type EngineTurn, nextTurn } from '../../src/work/engine-pool.js'
import { smaInput } from './sma-input.js'

const input = smaInput(200)

/** A user's module that hangs in a builtin on its first bar: it holds its thread until its budget (a minute here) or the pool's close. */
const HANG = {
  job: {
    source: { id: 'tpl-hang', version: 1, timeframe: '1h', description: { paramsSchema: { type: 'object' as const, properties: {}, additionalProperties: false as const }, defaults: {}, multiSymbol: false, warmup: 0, hasValidate: false } },
    code: compileModule('export function create() { return { onBar() { Array.prototype.indexOf.call({ length: 2 ** 31 }, 1); return NaN } } }', 'javascript').code,
    seed: 1,
  },
  budgetMs: 60_000,
}

const A_JOB: EngineTurn = { user: 1, lane: 'job' }

/** A run whose start is seen: its first progress message, or its end. */
function watched(pool: EnginePool, turn: EngineTurn, custom?: typeof HANG) {
  const seen = { started: false, ended: false }
  const result = pool.run(custom ? { ...input, templateId: custom.job.source.id, params: {} } : input, () => (seen.started = true), custom, turn).result
  void result.then(
    () => ((seen.started = true), (seen.ended = true)),
    () => (seen.ended = true),
  )
  return { seen, result }
}

describe('the engine pool shares its threads between users', () => {
  it("gives another user's job a thread at once while one user's module holds the only one, and that user's next runs wait their turn", async () => {
    const pool = new EnginePool(1)
    try {
      const hang = watched(pool, A_JOB, HANG)
      const a1 = watched(pool, A_JOB)
      const a2 = watched(pool, { user: 1, lane: 'sweep' })
      const b = watched(pool, { user: 2, lane: 'job' })
      const done = await b.result
      assert.ok(done.trades.length > 0)
      assert.equal(hang.seen.ended, false, "A's module still holds its thread: B did not wait for it")
      assert.equal(a1.seen.started, false, "A's next job waits for A's thread, not for B's")
      assert.equal(a2.seen.started, false)
      // A third user's module takes the thread beyond the pool's one; then a fourth user's sweep run and a fifth's job
      // wait. When the third's module ends at its budget, the job is taken first.
      const held = watched(pool, { user: 3, lane: 'job' }, { ...HANG, budgetMs: 1500 })
      const c = watched(pool, { user: 4, lane: 'sweep' })
      const d = watched(pool, { user: 5, lane: 'job' })
      await assert.rejects(held.result, /budget/)
      await Promise.race([c.result, d.result])
      assert.equal(d.seen.ended, true, "a single job goes before another user's sweep run when both users have nothing running")
      assert.equal(c.seen.started, false)
      await c.result
      assert.equal(a1.seen.started, false)
    } finally {
      await pool.close()
    }
  })

  it('takes users in turn on its own threads: a user with fewer running first, then a single job before a sweep run, then the one served longest ago', () => {
    const job = (user: number) => ({ turn: { user, lane: 'job' as const } })
    const sweep = (user: number) => ({ turn: { user, lane: 'sweep' as const } })
    // User 1 runs two already, user 2 one: user 2's run goes first though it was queued last.
    assert.equal(nextTurn([job(1), job(1), sweep(2)], new Map([[1, 2], [2, 1]]), new Map()), 2)
    // Both run one: the single job first.
    assert.equal(nextTurn([sweep(1), job(2)], new Map([[1, 1], [2, 1]]), new Map()), 1)
    // Both run none, both sweeps: the user served longest ago (user 3 never was).
    assert.equal(nextTurn([sweep(1), sweep(2), sweep(3)], new Map(), new Map([[1, 5], [2, 4]])), 2)
    assert.equal(nextTurn([sweep(1), sweep(2)], new Map(), new Map([[1, 5], [2, 4]])), 1)
    // All equal: the oldest.
    assert.equal(nextTurn([job(1), job(1)], new Map(), new Map()), 0)
  })

  it('ends a waiting run as cancelled when the pool closes', async () => {
    const pool = new EnginePool(1)
    const hang = watched(pool, A_JOB, HANG)
    const next = watched(pool, A_JOB)
    await pool.close()
    await assert.rejects(next.result, EngineCancelled)
    await hang.result.catch(() => undefined)
  })

  it('cancels a run asked for after the pool closed, rather than leaving it (and its heartbeat) waiting forever', { timeout: 10_000 }, async () => {
    const pool = new EnginePool(1)
    await pool.close()
    await assert.rejects(watched(pool, A_JOB).result, EngineCancelled)
  })
})
