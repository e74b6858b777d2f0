/** What bench/run.ts hands every suite. */
export interface SuiteOptions {
  /** Seconds of measured load per target. */
  durationS: number
  connections: number
  /** Seconds of unmeasured load per target before the measured run (JIT, caches, connection set-up). */
  warmupS: number
  /** Start the server with --cpu-prof and summarise where its time went during each measured run. */
  cpuProfile: boolean
  /** Rounds of each route against its ceiling (HTTP suites): the median is judged, the spread reported. */
  rounds: number
  /** Requests per second each HTTP route and its ceiling get (undefined: as fast as each answers). */
  rate: number | undefined
}

export interface SuiteResult {
  /** Printed as the suite's one JSON object on stdout. */
  report: Record<string, unknown>
  /** Checks that make the numbers untrustworthy (errors, non-2xx); a non-empty list exits 1. */
  failures: string[]
}

export interface SuiteModule {
  run(options: SuiteOptions): Promise<SuiteResult>
}
