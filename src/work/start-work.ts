import { listenForQueued } from '../db/queue.js'
import { EnginePool } from './engine-pool.js'
import { ensureQueues } from './ensure-queues.js'
import { historyCaches } from './history-cache.js'
import { recoverLost, SWEEP_MS } from './recover-lost.js'
import { runFenced } from './run-fenced.js'
import type { AnyWorkHandler, WorkContext, WorkDeps } from './work-handler.js'

/**
 * The worker side of this node: one loop for every kind of work (graphile/worker's one worker and its
 * task list). Each handler's queue is worked at its concurrency; one LISTEN wakes whichever queue got
 * work; every SWEEP_MS each handler's lost work is handed on; every run is claimed, beaten and fenced
 * by run-fenced.ts. The engine threads and the decoded history are the node's, shared by every kind.
 */
export async function startWork(deps: WorkDeps, handlers: readonly AnyWorkHandler[]): Promise<{ stop(): Promise<void> }> {
  const work: WorkContext = { ...deps, pool: new EnginePool(deps.workers), caches: historyCaches(deps.historyCacheMb) }
  await ensureQueues(deps.boss, handlers)
  const workers: { queue: string; id: string; wake(): void }[] = []
  for (const handler of handlers) {
    let wake = () => undefined as void
    const id = await deps.boss.work<object>(
      handler.queue,
      { batchSize: 1, localConcurrency: handler.concurrency(deps.workers), pollingIntervalSeconds: deps.pollSeconds ?? 0.5 },
      async (jobs) => {
        for (const job of jobs) await runFenced(work, handler, job.data)
        // pg-boss would look for the next message at its next poll (0.5 s): with many queued at once, it is there now.
        if (handler.nextAtOnce) wake()
      },
    )
    wake = () => deps.boss.notifyWorker(id)
    workers.push({ queue: handler.queue, id, wake })
  }
  const listener = await listenForQueued(
    deps.database,
    (queue) => {
      for (const worker of workers) if (queue === worker.queue || queue === '') worker.wake()
    },
    (error) => deps.log.warn({ err: error }, 'listening for queued jobs failed: workers poll every 0.5 s meanwhile'),
  )
  const recover = async () => {
    for (const handler of handlers) await recoverLost(work, handler)
  }
  await recover()
  const timer = setInterval(() => void recover(), SWEEP_MS)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await listener.close()
      for (const worker of workers) await deps.boss.offWork(worker.queue, { id: worker.id }).catch(() => undefined)
      await work.pool.close()
    },
  }
}
