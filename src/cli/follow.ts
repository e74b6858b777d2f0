import { CommandFailed } from './cli-errors.js'
import { type CliContext, Interrupted } from './context.js'
import { jobProgress } from './progress.js'

/** What `backtest run` and `sweep run` follow: a job or a sweep as the API shows it. */
export interface Followed {
  id: string
  status: string
  progress: number
  error?: { code: string; message: string } | null
}

/**
 * Runs `wait` (the client's run(): create, then polls) with a progress bar on stderr. Ctrl-C stops
 * waiting only: the job goes on, and the message says how to find it (perpetua <noun> show|cancel ID).
 */
export async function followWithProgress<T extends Followed>(
  context: CliContext,
  noun: 'backtest' | 'sweep',
  wait: (options: { signal: AbortSignal; onProgress: (polled: T) => void }) => Promise<T>,
): Promise<T> {
  const signal = context.interrupted()
  const progress = jobProgress(process.stderr, context.output.errIsTTY)
  let id: string | undefined
  try {
    const followed = await wait({
      signal,
      onProgress: (polled) => {
        id = polled.id
        progress.update(polled)
      },
    })
    progress.stop()
    return followed
  } catch (error) {
    progress.stop()
    if (signal.aborted && signal.reason instanceof Interrupted && id !== undefined) {
      throw new CommandFailed(`stopped waiting; ${id} goes on: perpetua ${noun} show ${id}, or perpetua ${noun} cancel ${id}`, 130)
    }
    throw error
  }
}

/** A failed or cancelled job or sweep is a failed command (exit 1), with the API's reason. */
export function endStatus(followed: Followed): void {
  if (followed.status === 'failed') throw new CommandFailed(`${followed.id} failed: ${followed.error?.message ?? 'no reason given'}${followed.error?.code ? ` (${followed.error.code})` : ''}`)
  if (followed.status === 'cancelled') throw new CommandFailed(`${followed.id} was cancelled`)
}
