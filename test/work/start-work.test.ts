import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import type { PgBoss } from 'pg-boss'
import type { Db } from '../../src/db/connect.js'
import { sendInTransaction } from '../../src/db/queue.js'
import { EngineCancelled } from '../../src/work/engine-pool.js'
import { ensureQueues, HEARTBEAT_SECONDS } from '../../src/work/ensure-queues.js'
import { handlersWithLostWork, LOST_AFTER_MS, SWEEP_MS } from '../../src/work/recover-lost.js'
import { startWork } from '../../src/work/start-work.js'
import type { WorkHandler } from '../../src/work/work-handler.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { poll } from '../support/poll.js'
import { memoryLogger } from '../support/secret-scan.js'

/**
 * The worker side's one loop, tested once for every kind of work through a kind of its own: items in
 * a table of this test, on two queues, claimed, beaten, fenced and recovered by the loop as a backtest
 * job or a sweep task is. The loop polls every 10 minutes here, so only the LISTEN wake-up can start
 * a run in time.
 */

/** What an item's run does: finish, hold until it is stopped, throw, or end as a closing pool ends an engine run. */
type Behaviour = 'finish' | 'hold' | 'throw' | 'engine-cancelled'

interface ItemMessage {
  id: string
  attempt: number
}

interface Item {
  id: string
  queue: string
  behaviour: Behaviour
  attempt: number
  status: string
  beats: number
  claims: number
  error: string | null
}

const POLL_SECONDS = 600
const WITHIN_MS = 20_000

/** The test's kind of work on `queue`: its claim, beat, failure and recovery in SQL, fenced by attempt as a real kind's. */
function itemHandler(queue: string, seen: { ran: string[]; stopped: string[] }): WorkHandler<ItemMessage, Item> {
  return {
    queue,
    name: `${queue} items`,
    concurrency: (engineThreads) => engineThreads,
    async claim(work, message) {
      const { rows } = await sql<Item>`update work_items set status = 'running', heartbeat_at = now(), claims = claims + 1
        where id = ${message.id} and attempt = ${message.attempt} and heartbeat_at is null and status in ('queued', 'running')
        returning *`.execute(work.db)
      return rows[0]
    },
    async beat(work, item) {
      const { rows } = await sql`update work_items set heartbeat_at = now(), beats = beats + 1
        where id = ${item.id} and attempt = ${item.attempt} and status = 'running' returning id`.execute(work.db)
      return rows.length === 1
    },
    async run(work, item, lost) {
      seen.ran.push(`${queue}:${item.id}:${item.attempt}`)
      if (item.behaviour === 'throw') throw new Error(`item ${item.id} failed`)
      if (item.behaviour === 'engine-cancelled') throw new EngineCancelled('the engine pool closed')
      if (item.behaviour === 'hold') {
        await new Promise<void>((resolve, reject) => {
          const timeout = setTimeout(() => reject(new Error(`item ${item.id} was never stopped`)), WITHIN_MS)
          lost.addEventListener('abort', () => (clearTimeout(timeout), resolve()))
        })
        seen.stopped.push(item.id)
        throw new Error('a stopped run fails on its way out: never recorded')
      }
      await finish(work.db, item, 'done', null)
    },
    fail: (work, item, error) => finish(work.db, item, 'failed', error instanceof Error ? error.message : String(error)),
    async handBack(trx, item) {
      const { rows } = await sql<{ id: string }>`update work_items set status = 'queued', heartbeat_at = null
        where id = ${item.id} and attempt = ${item.attempt} and status = 'running' returning id`.execute(trx)
      return rows[0] && { id: item.id, attempt: item.attempt }
    },
    async recover(trx, lost) {
      const { rows } = await sql<{ id: string; attempt: number }>`select id, attempt from work_items
        where queue = ${queue} and status = 'running' and heartbeat_at < now() - make_interval(secs => ${lost.lostAfterMs / 1000})
        for update skip locked`.execute(trx)
      const failed = rows.filter((row) => row.attempt >= lost.maxAttempts).map((row) => row.id)
      const rerun = rows.filter((row) => row.attempt < lost.maxAttempts).map((row) => ({ id: row.id, attempt: row.attempt + 1 }))
      for (const id of failed) await sql`update work_items set status = 'failed', error = 'WORKER_LOST' where id = ${id}`.execute(trx)
      for (const run of rerun) await sql`update work_items set attempt = ${run.attempt}, heartbeat_at = null where id = ${run.id}`.execute(trx)
      return { rerun, failed }
    },
    anyLost: (lostAfterMs) =>
      sql<boolean>`exists (select 1 from work_items where queue = ${queue} and status = 'running' and heartbeat_at < now() - make_interval(secs => ${lostAfterMs / 1000}))`,
  }
}

async function finish(db: Db, item: Item, status: string, error: string | null) {
  await sql`update work_items set status = ${status}, error = ${error}
    where id = ${item.id} and attempt = ${item.attempt} and status = 'running'`.execute(db)
}

for (const backend of backends()) {
  describe(`the worker side's one loop (${backend})`, () => {
    let t: TestApp
    let db: Db
    let boss: PgBoss
    let stop = async () => undefined as void
    const logs = memoryLogger()
    const seen = { ran: [] as string[], stopped: [] as string[] }
    let items = 0

    before(async () => {
      t = await startTestApp(backend, {}, { queue: 'queue' })
      db = t.database.handle.db
      boss = t.services.boss!
      await sql`create table work_items (
        id text primary key, queue text not null, behaviour text not null, attempt int not null default 1, status text not null default 'queued',
        heartbeat_at timestamptz, beats int not null default 0, claims int not null default 0, error text)`.execute(db)
      const handlers = [itemHandler('work-test-a', seen), itemHandler('work-test-b', seen)]
      const deps = { db, boss, database: t.database.handle, market: t.services.market, now: Date.now, log: logs.logger, workers: 1, historyCacheMb: 0, pollSeconds: POLL_SECONDS }
      const work = await startWork(deps, handlers)
      stop = () => work.stop()
    })
    after(async () => {
      await stop()
      await t.close()
    })

    /** Stores an item and enqueues `messages` for it on `queue`, in one transaction as a real kind's creation does. */
    async function enqueue(queue: string, behaviour: Behaviour, messages = 1): Promise<string> {
      const id = `item-${++items}`
      await db.transaction().execute(async (trx) => {
        await sql`insert into work_items (id, queue, behaviour) values (${id}, ${queue}, ${behaviour})`.execute(trx)
        for (let i = 0; i < messages; i++) await sendInTransaction(boss, trx, queue, { id, attempt: 1 } satisfies ItemMessage)
      })
      return id
    }
    const itemOf = async (id: string) => (await sql<Item>`select * from work_items where id = ${id}`.execute(db)).rows[0]!
    const untilStatus = (id: string, statuses: string[]) =>
      poll(`${id} to be ${statuses.join(' or ')}`, WITHIN_MS, async () => {
        const item = await itemOf(id)
        return statuses.includes(item.status) ? item : undefined
      })
    /** Waits until pg-boss has every message of `id` completed: each message's handler call has returned. */
    const untilHandled = (id: string) =>
      poll(`the messages of ${id} to be handled`, WITHIN_MS, async () => {
        const { rows } = await sql<{ state: string }>`select state from pgboss.job where data->>'id' = ${id}`.execute(db)
        return rows.length > 0 && rows.every((row) => row.state === 'completed') ? rows.length : undefined
      })

    it('wakes the queue that got work and runs its message, claiming the work once for two messages of one attempt', async () => {
      // Two messages in one transaction are one notification: the second is fetched because the queue's
      // pollers are woken when a run ends, not 10 minutes later.
      const id = await enqueue('work-test-b', 'finish', 2)
      const item = await untilStatus(id, ['done'])
      assert.equal(await untilHandled(id), 2)
      assert.equal((await itemOf(id)).claims, 1, 'the second message found the work claimed')
      assert.equal(item.error, null)
      assert.deepEqual(
        seen.ran.filter((run) => run.includes(`:${id}:`)),
        [`work-test-b:${id}:1`],
        'run once, by the handler of its own queue',
      )
    })

    it('beats while a run lasts, and stops a run whose work was cancelled or handed to another attempt, recording nothing for it', async () => {
      // One on each queue, so both run at once whatever a queue's share of one engine thread.
      const cancelled = await enqueue('work-test-a', 'hold')
      const handedOn = await enqueue('work-test-b', 'hold')
      await poll('both runs to beat', WITHIN_MS, async () => ((await itemOf(cancelled)).beats >= 2 && (await itemOf(handedOn)).beats >= 2 ? true : undefined))
      await sql`update work_items set status = 'cancelled' where id = ${cancelled}`.execute(db)
      await sql`update work_items set attempt = 2 where id = ${handedOn}`.execute(db)
      await poll('both runs to stop', WITHIN_MS, () => (seen.stopped.includes(cancelled) && seen.stopped.includes(handedOn) ? true : undefined))
      await untilHandled(cancelled)
      await untilHandled(handedOn)
      assert.deepEqual([(await itemOf(cancelled)).status, (await itemOf(cancelled)).error], ['cancelled', null], 'a stopped run is not failed')
      assert.deepEqual([(await itemOf(handedOn)).status, (await itemOf(handedOn)).error], ['running', null])
      await sql`update work_items set status = 'cancelled' where id = ${handedOn}`.execute(db) // no attempt 2 was enqueued: out of recovery's way
    })

    it("records a failed run through its handler, and leaves a run ended by a closing engine pool to recovery", async () => {
      const failing = await enqueue('work-test-a', 'throw')
      const item = await untilStatus(failing, ['failed'])
      assert.equal(item.error, `item ${failing} failed`)
      const closing = await enqueue('work-test-a', 'engine-cancelled')
      await untilHandled(closing)
      assert.deepEqual([(await itemOf(closing)).status, (await itemOf(closing)).error], ['running', null])
      await sql`update work_items set status = 'cancelled' where id = ${closing}`.execute(db)
    })

    it('looks for lost work in one statement that names only the kinds with a silent run', async () => {
      // Two kinds the loop does not work, so nothing recovers these rows meanwhile.
      const [c, d] = [itemHandler('work-test-c', seen), itemHandler('work-test-d', seen)]
      const look = async () => (await handlersWithLostWork({ db, log: logs.logger }, [c, d])).map((handler) => handler.queue)
      assert.deepEqual(await look(), [], 'nothing running')
      await sql`insert into work_items (id, queue, behaviour, status, heartbeat_at) values
        ('beating-c', 'work-test-c', 'finish', 'running', now()),
        ('queued-c', 'work-test-c', 'finish', 'queued', now() - interval '1 minute'),
        ('silent-d', 'work-test-d', 'finish', 'running', now() - interval '1 minute')`.execute(db)
      assert.deepEqual(await look(), ['work-test-d'], 'a run beating now, or work not running, is not lost')
      await sql`update work_items set heartbeat_at = now() - interval '1 minute' where id = 'beating-c'`.execute(db)
      assert.deepEqual(await look(), ['work-test-c', 'work-test-d'])
      await sql`delete from work_items where id in ('beating-c', 'queued-c', 'silent-d')`.execute(db)
    })

    it('hands a run whose worker was lost to its next attempt, which runs it; fails one lost on its last attempt', async () => {
      const lost = await enqueue('work-test-b', 'finish', 0)
      const lostTwice = await enqueue('work-test-b', 'finish', 0)
      // As if their workers had died mid-run: running, the last heartbeat long ago.
      await sql`update work_items set status = 'running', heartbeat_at = now() - interval '1 minute' where id in (${lost}, ${lostTwice})`.execute(db)
      await sql`update work_items set attempt = 2 where id = ${lostTwice}`.execute(db)
      const started = Date.now()
      const rerun = await untilStatus(lost, ['done', 'failed'])
      assert.deepEqual([rerun.status, rerun.attempt, rerun.claims], ['done', 2, 1])
      const failed = await untilStatus(lostTwice, ['done', 'failed'])
      assert.deepEqual([failed.status, failed.error, failed.claims], ['failed', 'WORKER_LOST', 0])
      assert.ok(Date.now() - started < LOST_AFTER_MS + SWEEP_MS + 5_000, `found within a sweep or so: ${Date.now() - started} ms`)
      assert.ok(seen.ran.includes(`work-test-b:${lost}:2`))
      const lines = logs.lines().map((line) => JSON.parse(line.text) as { msg: string; queue?: string; rerun?: ItemMessage[]; failed?: string[] })
      assert.ok(lines.some((line) => line.queue === 'work-test-b' && line.rerun?.some((run) => run.id === lost && run.attempt === 2)), 'the re-run is logged')
      assert.ok(lines.some((line) => line.queue === 'work-test-b' && line.failed?.includes(lostTwice)), 'the failure is logged')
    })
  })
}

for (const backend of backends()) {
  describe(`a message whose worker died before claiming its work (${backend})`, () => {
    it('is failed by its lapsed heartbeat and taken again, and the work runs once at its attempt', async () => {
      const t = await startTestApp(backend, {}, { queue: 'queue' })
      let stop = async () => undefined as void
      try {
        const db = t.database.handle.db
        const boss = t.services.boss!
        await sql`create table work_items (
          id text primary key, queue text not null, behaviour text not null, attempt int not null default 1, status text not null default 'queued',
          heartbeat_at timestamptz, beats int not null default 0, claims int not null default 0, error text)`.execute(db)
        const seen = { ran: [] as string[], stopped: [] as string[] }
        const handler = itemHandler('work-test-c', seen)
        await ensureQueues(boss, [handler])
        await db.transaction().execute(async (trx) => {
          await sql`insert into work_items (id, queue, behaviour) values ('orphan', 'work-test-c', 'finish')`.execute(trx)
          await sendInTransaction(boss, trx, 'work-test-c', { id: 'orphan', attempt: 1 } satisfies ItemMessage)
        })
        // The worker that died: it took the message as a poller does and never claimed the work nor touched the message again.
        const [taken] = await boss.fetch<ItemMessage>('work-test-c')
        assert.equal(taken?.data.id, 'orphan')
        await sql`update pgboss.job set heartbeat_on = now() - make_interval(secs => ${HEARTBEAT_SECONDS + 1}) where id = ${taken!.id}`.execute(db)
        // Recovery alone cannot see it: the work is queued, not running, so nothing was lost by its fence.
        const deps = { db, boss, database: t.database.handle, market: t.services.market, now: Date.now, log: memoryLogger().logger, workers: 1, historyCacheMb: 0, pollSeconds: 0.5 }
        const work = await startWork(deps, [handler])
        stop = () => work.stop()
        const item = await poll('the orphaned work to run', 120_000, async () => {
          const row = (await sql<Item>`select * from work_items where id = 'orphan'`.execute(db)).rows[0]!
          return row.status === 'done' ? row : undefined
        })
        assert.deepEqual([item.attempt, item.claims], [1, 1])
        assert.deepEqual(seen.ran, ['work-test-c:orphan:1'])
        const { rows } = await sql<{ retry_count: number }>`select retry_count from pgboss.job where id = ${taken!.id}`.execute(db)
        assert.equal(rows[0]?.retry_count, 1, "pg-boss's retry of the same message ran it")
      } finally {
        await stop()
        await t.close()
      }
    })
  })
}
