import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { jobBudgetMs } from '../../src/custom-templates/sandbox/limits.js'
import type { Db } from '../../src/db/connect.js'
import { killChildren, poll, startCli } from '../cli/cli-process.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { tempDir } from '../support/database.js'
import { HOSTILE_MODULES } from '../support/hostile-modules.js'
import type { KeyPair } from '../support/signing.js'

/**
 * Issue 34: one user's hostile modules and a sweep never hold up another user's backtest. User A keeps
 * its five job slots full (one job of each hostile module, a 1,000-configuration sweep), refilling each
 * as it frees; user B's one-year 1h backtest is submitted TRIES times beside a module of A's that hangs
 * in a builtin, and B's job ends before that module does, every time: B never waits for A's work (first
 * in, first out on one engine thread, B would end after it, at the first try). Then A's work all ends:
 * each hostile job with its code, the sweep done. One engine thread per node: embedded (one process),
 * and PostgreSQL with two worker processes. How long B takes is the bench's (`npm run bench -- fairness`),
 * not this test's.
 *
 * The hanging module holds its thread for its job's budget, derived from its upload's measured cost: the
 * module is costly on the smoke run's bars (hostile-modules.ts), so its budget is the flat cap (~10.9 s
 * for a year of 1h bars), which the test asserts before relying on it; a cheap one would get the 2 s floor
 * and could end before B does for no fault of the scheduling.
 */
const TRIES = 10
const YEAR = { params: {}, symbols: ['BTCUSDT'], timeframe: '1h', start: '2024-01-01T00:00:00Z', end: '2024-12-31T23:00:00Z', capital: '10000' }
/** 2024 is a leap year: 366 days of 1h bars. */
const YEAR_BARS = 366 * 24
/**
 * The 1,000 configurations, each over two months of 1h bars (the 32 daily returns its statistics
 * need, and slow ≤ 119: a short warmup): cheap runs, so the sweep A has running when B's tries end
 * completes in seconds, not the minutes a year's would take.
 */
const SWEEP = {
  base: { ...YEAR, start: '2024-11-01T00:00:00Z', params: undefined, template_id: 'sma_cross' },
  grid: { fast: Array.from({ length: 10 }, (_, i) => 2 + i), slow: Array.from({ length: 100 }, (_, i) => 20 + i) },
}
const SCOPES = ['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write'] as const
/**
 * B is submitted beside a hanging module with at least this much of its budget still ahead: the module's
 * budget runs from its thread's start, after the job's started_at, so it holds the thread past
 * started_at + budget. Several tries may go beside one hanging module (each a fresh job of B's, apart by a pause).
 */
const AHEAD_MS = 5000

describe("another user's backtest beside one user's hostile modules and sweep (issue 34)", () => {
  after(killChildren)

  it('embedded, one engine thread', async () => {
    const t = await startTestApp('pglite', {}, { replay: true, queue: 'workers', engineThreads: 1, wallClock: true })
    try {
      await contend(t)
    } finally {
      await t.close()
    }
  })

  it('PostgreSQL, two worker processes of one engine thread each', { skip: !process.env.TEST_DATABASE_URL }, async () => {
    const t = await startTestApp('postgres', {}, { replay: true, queue: 'queue', wallClock: true })
    const env = { DATABASE_URL: t.database.url!, UPSTREAM_URL: t.replay!.url, WORKERS: '1', LOG_LEVEL: 'info' }
    try {
      for (let i = 0; i < 2; i++) {
        const worker = startCli(['worker'], { ...env, DATA_DIR: tempDir('fair-worker') })
        await poll('a worker to start', 60_000, () => (worker.output().stdout.includes('perpetua worker is running backtests') ? true : undefined))
      }
      await contend(t)
    } finally {
      await t.close()
    }
  })
})

async function contend(t: TestApp): Promise<void> {
  const db = t.database.handle.db
  const a = await t.createKey([...SCOPES])
  const b = await t.createKey([...SCOPES])
  const post = async (key: KeyPair, url: string, body: object) => {
    const res = await t.signed(key, 'POST', url, body)
    assert.ok(res.statusCode === 200 || res.statusCode === 201 || res.statusCode === 202, `${url}: ${res.statusCode} ${res.body}`)
    return res.json().id as string
  }
  const templates = new Map<string, string>()
  for (const [kind, { source }] of Object.entries(HOSTILE_MODULES)) templates.set(await post(a, '/v1/templates', { name: `hostile ${kind}`, source }), kind)
  const native = [...templates].find(([, kind]) => kind === 'native')![0]
  // The premise: the hanging module's measured cost earns it the flat cap, not the floor.
  const { smoke_us_per_bar: cost } = await db.selectFrom('custom_template_versions').select('smoke_us_per_bar').where('template_id', '=', native).executeTakeFirstOrThrow()
  const budgetMs = jobBudgetMs(YEAR_BARS, cost ?? undefined)
  assert.equal(budgetMs, jobBudgetMs(YEAR_BARS), `the hanging module measured ${cost} µs per bar at upload: its budget, ${budgetMs} ms, is not the flat one`)

  // B alone first: the history is stored and every process warm.
  assert.equal((await ended(db, 'backtest_jobs', await post(b, '/v1/backtest/jobs', { ...YEAR, template_id: 'sma_cross', params: { fast: 10, slow: 30 } }))).status, 'done')

  // A's five slots, each refilled with its kind as it frees.
  let stop = false
  const aJobs: string[] = []
  const aSweeps: string[] = []
  const slot = async (submit: () => Promise<string>, table: 'backtest_jobs' | 'backtest_sweeps', into: string[]) => {
    while (!stop) {
      const id = await submit()
      into.push(id)
      await ended(db, table, id, 250)
    }
  }
  const slots = [
    ...[...templates.keys()].map((templateId) => slot(() => post(a, '/v1/backtest/jobs', { ...YEAR, template_id: templateId }), 'backtest_jobs', aJobs)),
    slot(() => post(a, '/v1/backtest/sweeps', SWEEP), 'backtest_sweeps', aSweeps),
  ]
  try {
    for (let i = 0; i < TRIES; i++) {
      // A's hanging module running, with at least AHEAD_MS of its hold ahead.
      const hanging = await poll('a hanging module of A to be running', 180_000, async () => {
        const row = await db
          .selectFrom('backtest_jobs')
          .select(['id', 'started_at'])
          .where('template_id', '=', native)
          .where('status', '=', 'running')
          .where('started_at', '>', new Date(Date.now() - (budgetMs - AHEAD_MS)))
          .executeTakeFirst()
        return row
      })
      const bJob = await ended(db, 'backtest_jobs', await post(b, '/v1/backtest/jobs', { ...YEAR, template_id: 'sma_cross', params: { fast: 10, slow: 30 } }))
      assert.equal(bJob.status, 'done', JSON.stringify(bJob.error))
      const held = await db.selectFrom('backtest_jobs').select(['status', 'finished_at']).where('id', '=', hanging.id).executeTakeFirstOrThrow()
      assert.ok(
        held.finished_at === null || held.finished_at > bJob.finished_at!,
        `try ${i + 1}: B's job ended (${bJob.finished_at!.toISOString()}) after A's hanging module (${held.finished_at?.toISOString()}): it waited for it`,
      )
      // A pause, as the bench's: the tries spread over a hanging module's hold and over several of them.
      await new Promise((resolve) => setTimeout(resolve, 500 + Math.random() * 1500))
    }
  } finally {
    stop = true
    await Promise.all(slots)
  }

  // A's work all ended: each hostile job with its module's code, every sweep done.
  const jobs = await db.selectFrom('backtest_jobs').select(['template_id', 'status', 'error']).where('id', 'in', aJobs).execute()
  for (const job of jobs) {
    const kind = templates.get(job.template_id) as keyof typeof HOSTILE_MODULES
    assert.equal(job.status, 'failed', `${kind} ${job.status}`)
    assert.equal((job.error as { code: string }).code, HOSTILE_MODULES[kind].code, `${kind}: ${JSON.stringify(job.error)}`)
  }
  assert.ok(new Set(jobs.map((job) => templates.get(job.template_id))).size === 4, 'every hostile kind ran')
  const sweeps = await db.selectFrom('backtest_sweeps').select(['status', 'runs_done', 'error']).where('id', 'in', aSweeps).execute()
  for (const sweep of sweeps) assert.deepEqual({ status: sweep.status, runs: sweep.runs_done }, { status: 'done', runs: 1000 }, JSON.stringify(sweep.error))
}

/** The job or sweep once it ended (done, failed or cancelled), read from the database every `everyMs` (A's slots: seldom, not to load the database B uses). */
async function ended(db: Db, table: 'backtest_jobs' | 'backtest_sweeps', id: string, everyMs = 50) {
  const deadline = Date.now() + 600_000
  for (;;) {
    const row = await db.selectFrom(table).select(['status', 'error', 'finished_at']).where('id', '=', id).executeTakeFirstOrThrow()
    if (row.status !== 'queued' && row.status !== 'running') return row
    assert.ok(Date.now() < deadline, `${table} ${id} still ${row.status} after 10 minutes`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
