import os from 'node:os'

const started = performance.now()

/** Progress for the person running a bench. stdout is reserved for the suite's one JSON result. */
export function log(message: string): void {
  process.stderr.write(`[bench +${((performance.now() - started) / 1000).toFixed(1)}s] ${message}\n`)
}

/** The host's 1-minute load average, rounded: reported beside figures taken on a shared machine. */
export function loadAverage(): number {
  return Math.round(os.loadavg()[0]! * 10) / 10
}
