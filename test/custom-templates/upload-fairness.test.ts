import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { SANDBOX_LIMITS } from '../../src/custom-templates/sandbox/limits.js'
import { startTestApp, type TestApp } from '../support/app.js'
import type { KeyPair } from '../support/signing.js'
import { SMA } from './modules.js'

/** Issue 34's bound: another user's upload answers within this while one user floods the sandbox. */
const ANSWER_WITHIN_MS = 1_000
const HOSTILE_UPLOADS = 10

/**
 * Loops in a native builtin while it loads: QuickJS's interrupt handler never runs inside it, so only the
 * inspection's hard bound (the sandbox thread's watchdog, 5 s) ends it. Each upload takes its full budget.
 */
const hostile = (n: number) => `// hostile ${n}\nArray.prototype.indexOf.call({ length: 2 ** 31 }, 1)\nexport function create() { return { onBar() { return NaN } } }\n`

/**
 * "Done means" of issue 34 for uploads: user B's upload of a valid module answers within 1 s while user A
 * uploads ten modules that each take their full inspection budget. The API's sandbox threads
 * (SANDBOX_THREADS, default 2) run one call per user at a time, so A holds one thread and B gets the other.
 * Embedded (PGlite) only: what is contended is the sandbox threads, the same whatever the database.
 */
describe("another user's upload while one user floods the API's sandbox", () => {
  let t: TestApp
  let a: KeyPair
  let b: KeyPair
  before(async () => {
    t = await startTestApp('pglite')
    a = await t.createKey(['strategies:read', 'strategies:write'], 'flooder@example.com')
    b = await t.createKey(['strategies:read', 'strategies:write'], 'bystander@example.com')
  })
  after(() => t.close())

  const upload = async (key: KeyPair, name: string, source: string) => {
    const started = performance.now()
    const res = await t.signed(key, 'POST', '/v1/templates', { name, source })
    return { res, ms: performance.now() - started, endedAt: performance.now() }
  }

  it("answers B's valid upload within 1 s while A's ten uploads each burn their whole inspection budget; A's beyond its waiting limit are refused", async (context) => {
    // Both sandbox threads started first, as on a running server: they start on first use, and under tsx a
    // thread's start took 2.7 s (B's first contended upload on a never-used thread took 2.9 s), not the contention's.
    const third = await t.createKey(['strategies:read', 'strategies:write'], 'third@example.com')
    const warm = await Promise.all([upload(b, 'warm', SMA), upload(third, 'warm', SMA)])
    for (const { res } of warm) assert.equal(res.statusCode, 201, res.body)
    const soloMs = (await upload(b, 'alone', SMA)).ms

    const flood = Array.from({ length: HOSTILE_UPLOADS }, (_, n) => upload(a, `hostile ${n}`, hostile(n)))
    // A's first refusal (429) means A already has one upload running and the most waiting: B comes now.
    await Promise.race(flood.map((answer) => answer.then(({ res }) => (res.statusCode === 429 ? undefined : new Promise(() => undefined)))))
    const contended = await upload(b, 'beside the flood', SMA)
    assert.equal(contended.res.statusCode, 201, contended.res.body)
    assert.equal(contended.res.json().warmup, 30)
    context.diagnostic(`B's upload: ${soloMs.toFixed(0)} ms alone, ${contended.ms.toFixed(0)} ms beside A's ${HOSTILE_UPLOADS} hostile uploads`)
    assert.ok(contended.ms < ANSWER_WITHIN_MS, `B's upload took ${contended.ms.toFixed(0)} ms beside the flood`)

    const answers = await Promise.all(flood)
    const codes = answers.map(({ res }) => res.statusCode)
    const served = SANDBOX_LIMITS.apiCallsPerUser + SANDBOX_LIMITS.apiWaitingPerUser
    // A's first five were taken (one running, four waiting) and each ran into the watchdog; the rest were refused at once.
    assert.deepEqual(codes, [...Array(served).fill(400), ...Array(HOSTILE_UPLOADS - served).fill(429)], codes.join(' '))
    for (const { res } of answers.slice(0, served)) {
      assert.equal(res.json().error.field, 'source')
      assert.match(res.json().error.message, /the module failed: the strategy ran longer than 5000 ms/)
    }
    // B answered before even A's first burning upload ended: it never waited for one of A's.
    assert.ok(contended.endedAt < Math.min(...answers.slice(0, served).map(({ endedAt }) => endedAt)))
  })
})
