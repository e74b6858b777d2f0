import { listenForQueued } from '../db/queue.js'
import { EnginePool } from './engine-pool.js'
import { ensureQueues } from './ensure-queues.js'
import { historyCaches } from './history-cache.js'
import { handlersWithLostWork, recoverLost, SWEEP_MS } from './recover-lost.js'
import { runFenced } from './run-fenced.js'
import type { AnyWorkHandler, WorkContext, WorkDeps } from './work-handler.js'

/**
 * How often an embedded node's pg-boss polls its queues: every message is queued and every run ends in this
 * process, so the wake-ups see them all and the poll is a backstop. At 0.5 s its six pollers made 60 % of an
 * idle node's statements (docs/decisions/performance.md, "An idle node"). A server's nodes keep 0.5 s: a
 * notification from another node can be missed while a listener reconnects.
 */
export function pollSecondsFor(kind: 'embedded' | 'server'): number | undefined {
  return kind === 'embedded' ? 5 : undefined
}

/**
 * The worker side of this node: one loop for every kind of work (graphile/worker's one worker and its
 * task list). Each handler's queue is worked at its concurrency per user (each user's work in turn:
 * below, and engine-pool.ts); one LISTEN wakes whichever queue got
 * work; every SWEEP_MS each handler's lost work is handed on; every run is claimed, beaten and fenced
 * by run-fenced.ts. The engine threads and the decoded history are the node's, shared by every kind.
 */
export async function startWork(deps: WorkDeps, handlers: readonly AnyWorkHandler[]): Promise<{ stop(): Promise<void> }> {
  const stopping = new AbortController()
  const work: WorkContext = { ...deps, pool: new EnginePool(deps.workers), caches: historyCaches(deps.historyCacheMb), stopping: stopping.signal }
  await ensureQueues(deps.boss, handlers)
  const workers: { queue: string; ids: string[]; wake(): void }[] = []
  for (const handler of handlers) {
    const share = handler.concurrency(deps.workers)
    const ids: string[] = []
    // Every poller of the queue: notifyWorker(id of a work()) alone wakes only that work()'s first poller, and
    // getWipData lists each one. A poller busy with a run fetches again as soon as it ends.
    const wake = () => {
      for (const poller of deps.boss.getWipData()) if (poller.name === handler.queue) deps.boss.notifyWorker(poller.id)
    }
    // Twice the handler's concurrency in pollers, each user's work at most `share` of them on this node
    // (pg-boss's local group concurrency, counted per queue; a queued message's group is its user:
    // db/queue.ts): a user alone runs `share` at once as before; another user's work is taken at once
    // beside them, and the engine pool gives it a thread of its own (engine-pool.ts). Two work() of
    // `share` pollers each (pg-boss wants a group limit no larger than one work()'s pollers), so a
    // wake-up reaches every poller of the queue (wake, above).
    for (let i = 0; i < 2; i++) {
      const id = await deps.boss.work<object>(
        handler.queue,
        { batchSize: 1, localConcurrency: share, localGroupConcurrency: share, pollingIntervalSeconds: deps.pollSeconds ?? 0.5 },
        async (jobs) => {
          for (const job of jobs) await runFenced(work, handler, job.data)
          // The next message now, not at the next poll: a sweep's tasks are queued many at once, and a run that
          // ends frees its user's share for the user's next message (this poller, woken too, takes it once
          // pg-boss has counted the run's end; a poll finds nothing new that a wake-up would not bring).
          wake()
        },
      )
      ids.push(id)
    }
    workers.push({ queue: handler.queue, ids, wake })
  }
  const listener = await listenForQueued(
    deps.database,
    (queue) => {
      for (const worker of workers) if (queue === worker.queue || queue === '') worker.wake()
    },
    (error) => deps.log.warn({ err: error }, `listening for queued jobs failed: workers poll every ${deps.pollSeconds ?? 0.5} s meanwhile`),
  )
  const recover = async () => {
    for (const handler of await handlersWithLostWork(work, handlers)) await recoverLost(work, handler)
  }
  await recover()
  const timer = setInterval(() => void recover(), SWEEP_MS)
  timer.unref()
  return {
    /**
     * No more claims (every poller told at once), then each run in flight is stopped (its `lost` signal, and the
     * engine threads closing) and hands its work back to the queue (run-fenced.ts), where another node takes it
     * now. Waiting for the runs instead held a stopping node for a whole backtest or sweep task.
     */
    async stop() {
      clearInterval(timer)
      await listener.close()
      const stopped = workers.flatMap((worker) => worker.ids.map((id) => deps.boss.offWork(worker.queue, { id, wait: false }).catch(() => undefined)))
      await Promise.all(stopped)
      stopping.abort()
      await work.pool.close()
      for (const worker of workers) for (const id of worker.ids) await deps.boss.offWork(worker.queue, { id }).catch(() => undefined)
    },
  }
}
