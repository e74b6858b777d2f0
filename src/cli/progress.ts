import { SingleBar } from 'cli-progress'

const TERMINAL = new Set(['done', 'failed', 'cancelled'])

export interface JobProgress {
  update(job: { id: string; status: string; progress: number }): void
  stop(): void
}

/**
 * The progress bar of a backtest or sweep on stderr, fed by the client's polls. On a terminal it redraws in
 * place; on a pipe or file (noTTYOutput) it writes one line per poll, so logs and tests see it too.
 */
export function jobProgress(stream: NodeJS.WriteStream, isTTY: boolean): JobProgress {
  const bar = new SingleBar({
    stream,
    format: '{id} [{bar}] {percentage}% | {status} | {duration_formatted}',
    barCompleteChar: '#',
    barIncompleteChar: '-',
    barsize: 30,
    hideCursor: isTTY,
    noTTYOutput: true,
    // Without a terminal, lines come from the polls (render() below); the timer only marks a long silence.
    notTTYSchedule: 60_000,
    gracefulExit: false, // the command handles Ctrl-C, and stops the bar first
    clearOnComplete: !isTTY, // on a pipe this only drops the blank line stop() would add after the last line
  })
  let started = false
  return {
    update(job) {
      const payload = { id: job.id, status: job.status }
      const value = Math.round(job.progress * 1000) / 10
      if (!started) {
        bar.start(100, value, payload)
        started = true
        return
      }
      bar.update(value, payload)
      if (!isTTY && !TERMINAL.has(job.status)) bar.render() // the last line comes from stop()
    },
    stop() {
      if (started) bar.stop()
      started = false
    },
  }
}
