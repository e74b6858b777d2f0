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
  try {
    await handler.run(work, claimed, lost.signal)
  } catch (error) {
    // EngineCancelled without a lost signal: the node is stopping (the pool closed); recovery hands the work on.
    if (error instanceof EngineCancelled || lost.signal.aborted) return
    await handler.fail(work, claimed, error).catch(() => undefined)
  } finally {
    clearInterval(beat)
  }
}
