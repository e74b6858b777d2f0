import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { CompiledModule, ModuleDescription, StrategySandbox } from '../../src/custom-templates/sandbox/contract.js'
import { SANDBOX_LIMITS } from '../../src/custom-templates/sandbox/limits.js'
import { createStrategySandbox } from '../../src/custom-templates/sandbox/sandbox-service.js'
import { AppError } from '../../src/http/errors.js'
import { SMA } from './modules.js'

const [SLOW_USER, OTHER_USER, BUSY_USER] = [1, 2, 3]
/** validate() of fast 13 loops until the sandbox interrupts it: each such params check burns its whole time for one call. */
const SLOW = SMA.replace('if (p.fast >= p.slow)', 'if (p.fast === 13) for (;;) {}\n  if (p.fast >= p.slow)')

type Module = { compiled: CompiledModule; description: ModuleDescription }

/**
 * The API's sandbox threads are shared by every user: one user's slow modules must not hold the others'
 * uploads and params checks (one thread served them all in turn, so a user's calls, each up to its 5 s
 * bound, delayed everyone's).
 */
describe('the API sandbox threads shared between users', () => {
  let sandbox: StrategySandbox
  let slow: Module
  let sma: Module
  before(async () => {
    sandbox = createStrategySandbox(2)
    // Two users at once: both threads start now, before anything below is ordered.
    ;[slow, sma] = await Promise.all([sandbox.inspect(SLOW_USER, SLOW, 'javascript'), sandbox.inspect(OTHER_USER, SMA, 'javascript')])
  })
  after(() => sandbox.close())

  it("runs a user's calls one at a time, in order, while another user's call runs beside them and ends first", async () => {
    const ended: string[] = []
    const endedAt: number[] = []
    const slowCalls = [1, 2, 3].map((n) =>
      sandbox.resolveParams(SLOW_USER, slow.compiled, slow.description, { fast: 13, slow: 50 }).then(
        () => assert.fail('the looping validate() answered'),
        (error: unknown) => {
          ended.push(`slow ${n}`)
          endedAt.push(Date.now())
          return error
        },
      ),
    )
    const other = await sandbox.resolveParams(OTHER_USER, sma.compiled, sma.description, { fast: 5, slow: 50 })
    ended.push('other')
    assert.deepEqual(other, { params: { fast: 5, slow: 50, allow_short: false }, warmup: 50 })
    for (const error of await Promise.all(slowCalls)) {
      assert.ok(error instanceof AppError, String(error))
      assert.deepEqual([error.code, error.field], ['INVALID_PARAMETER', 'params'])
      assert.match(error.message, /the module failed: .*longer than its time for one call/)
    }
    // Had the slow user held both threads, the other call would have waited for one of theirs.
    assert.deepEqual(ended, ['other', 'slow 1', 'slow 2', 'slow 3'])
    // One at a time: each of the slow user's calls starts when the one before it ended, and runs its whole time.
    for (let k = 1; k < endedAt.length; k++) assert.ok(endedAt[k]! - endedAt[k - 1]! >= SANDBOX_LIMITS.callMs - 50, `ends ${endedAt}`)
  })

  it('refuses a call of a user who already has one running and the most waiting, with 429 naming the limit; later calls are served', async () => {
    const limit = SANDBOX_LIMITS.apiCallsPerUser + SANDBOX_LIMITS.apiWaitingPerUser
    const accepted = Array.from({ length: limit }, () => sandbox.inspect(BUSY_USER, SMA, 'javascript'))
    await assert.rejects(sandbox.inspect(BUSY_USER, SMA, 'javascript'), (error: unknown) => {
      assert.ok(error instanceof AppError, String(error))
      assert.deepEqual([error.code, error.status, error.headers['retry-after']], ['RATE_LIMITED', 429, '5'])
      assert.match(error.message, /at most 1 of your uploads or params checks runs at a time and 4 wait/)
      return true
    })
    // Another user is not refused meanwhile.
    assert.equal((await sandbox.resolveParams(OTHER_USER, sma.compiled, sma.description, {})).warmup, 30)
    for (const inspected of await Promise.all(accepted)) assert.equal(inspected.description.warmup, 30)
    assert.equal((await sandbox.inspect(BUSY_USER, SMA, 'javascript')).description.warmup, 30)
  })
})

/**
 * With one sandbox thread, users take turns: a user's waiting calls do not take back the thread their
 * call just freed while another user waits (issue 34: oldest-first made another user's upload wait for all
 * five of a flooding user's, 38 s; now for the one running).
 */
describe('one API sandbox thread shared between users', () => {
  let sandbox: StrategySandbox
  let slow: Module
  let sma: Module
  before(async () => {
    sandbox = createStrategySandbox(1)
    slow = await sandbox.inspect(SLOW_USER, SLOW, 'javascript')
    sma = await sandbox.inspect(OTHER_USER, SMA, 'javascript')
  })
  after(() => sandbox.close())

  it("serves another user's call next, after the running call, not after the first user's waiting ones", async () => {
    const ended: string[] = []
    const slowCalls = [1, 2, 3].map((n) =>
      sandbox.resolveParams(SLOW_USER, slow.compiled, slow.description, { fast: 13, slow: 50 }).then(
        () => assert.fail('the looping validate() answered'),
        () => void ended.push(`slow ${n}`),
      ),
    )
    // The first slow call has the thread; the other two wait, older than this one.
    const other = sandbox.resolveParams(OTHER_USER, sma.compiled, sma.description, { fast: 5, slow: 50 }).then((answer) => {
      ended.push('other')
      return answer
    })
    assert.equal((await other).warmup, 50)
    await Promise.all(slowCalls)
    assert.deepEqual(ended, ['slow 1', 'other', 'slow 2', 'slow 3'])
  })
})
