import { sendInTransaction } from '../db/queue.js'
import { EngineCancelled } from './engine-pool.js'
import type { WorkContext, WorkHandler } from './work-handler.js'

/** How often a run beats (its progress written, its ownership checked): a cancel takes effect within this. */
export const BEAT_MS = 500

/**
 * Claims the work `message` names and runs it under a heartbeat. A beat that finds the work no longer
 * this run's (cancelled, handed to a re-run) aborts the run's `lost` signal; the run then stops and
 * nothing is recorded for it. Any other failure is the handler's to record.
 */
export async function runFenced<Message extends object, Claimed>(work: WorkContext, handler: WorkHandler<Message, Claimed>, message: Message): Promise<void> {
  const claimed = await handler.claim(work, message)
  if (claimed === undefined) return
  const lost = new AbortController()
  const beat = setInterval(() => {
    void handler.beat(work, claimed).then((owned) => {
      if (!owned) lost.abort()
    }, () => undefined) // a beat that could not be written is retried by the next; missing 10 hands the work on
  }, BEAT_MS)
  // The node stopping stops the run as a loss does; what it leaves is handed back below, not to recovery.
  const halted = AbortSignal.any([lost.signal, work.stopping])
  try {
    await handler.run(work, claimed, halted)
  } catch (error) {
    // EngineCancelled: the engine threads closed under the run, the node stopping.
    if (!lost.signal.aborted && !work.stopping.aborted && !(error instanceof EngineCancelled)) await handler.fail(work, claimed, error).catch(() => undefined)
  } finally {
    clearInterval(beat)
  }
  // A run the node's stop cut short (one that finished meanwhile is no longer handed back: handBack finds it ended).
  // Should the hand-back fail (the database going too), recovery hands the work on once its beats stop.
  if (work.stopping.aborted && !lost.signal.aborted) {
    await handBack(work, handler, claimed).catch((failure: unknown) => work.log.warn({ err: failure, queue: handler.queue }, `could not hand ${handler.name} back: recovery will`))
  }
}

/** The run's work back in the queue at the same attempt, with its message in the same transaction (which wakes every node). */
async function handBack<Message extends object, Claimed>(work: WorkContext, handler: WorkHandler<Message, Claimed>, claimed: Claimed): Promise<void> {
  await work.db.transaction().execute(async (trx) => {
    const message = await handler.handBack(trx, claimed)
    if (message !== undefined) await sendInTransaction(work.boss, trx, handler.queue, message)
  })
}
