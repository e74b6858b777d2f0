/** Progress for the person running a bench. stdout is reserved for the suite's one JSON result. */
export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`)
}
