/**
 * Every bound the sandbox enforces, in one place (as workerd keeps its isolate limits behind one
 * interface): the API, the engine threads and the run sandboxes all read these numbers here.
 * The figures behind them are in ../../../docs/decisions/custom-strategies.md ("Custom strategies: the sandbox (issue 22)").
 */
export const SANDBOX_LIMITS = {
  /** Module source as uploaded (Shopify Functions' compiled-binary cap, research §3.1). */
  sourceBytes: 256 * 1024,
  /**
   * The instance's WebAssembly.Memory maximum: the only memory bound that holds (QuickJS's own limit
   * counts 8 bytes per block in these builds, research fact 1). Every allocation style stops here.
   */
  memoryBytes: 64 * 1024 * 1024,
  /** QuickJS's stack: deep recursion ends in "stack overflow" well before the WASM stack. */
  stackBytes: 256 * 1024,
  /** A warmup() answer above this is refused: a run reads this many closed bars before it acts. */
  maxWarmup: 5_000,
  /** Soft bound on one call into the guest (QuickJS's interrupt handler): a clean error for plain loops. */
  callMs: 2_000,
  /** …plus this per bar of a batch (a 4,096-bar batch gets 2.4 s more: ~100× its measured cost). */
  callPerBarMs: 0.6,
  /**
   * Hard bound on one call as the watchdog enforces it (terminates the thread): native builtins that
   * loop in C never poll the interrupt handler (research fact 3), so this is what bounds them.
   */
  hardCallMs: 5_000,
  /**
   * All the sandbox time one submission's params checks may take together (a sweep's base tries and its
   * configurations' validate(), in batches): before issue 37 each batch of 500 had its own 5 s, so a
   * 10,000-configuration sweep could hold an API sandbox thread ~80 s with a validate() that burned time.
   * The example sma_cross module checks 10,000 configurations in well under a second.
   */
  submissionValidateMs: 5_000,
  /**
   * A backtest's whole budget of strategy time (jobBudgetMs): jobMultiple × what the module's upload smoke
   * run cost per bar, at least jobFloorMs, and never more than the flat jobBaseMs + jobPerBarUs per bar
   * (the budget every job had before issue 34, and what a version without a measured cost still gets).
   */
  jobMultiple: 20,
  jobFloorMs: 2_000,
  jobBaseMs: 10_000,
  jobPerBarUs: 100,
  /** Bars fed per crossing into the guest: a crossing costs µs, so batches make it vanish per bar. */
  batchBars: 4_096,
  /** A template's stored versions and a user's templates. */
  templatesPerUser: 50,
  versionsPerTemplate: 100,
  /**
   * The API's sandbox threads (SANDBOX_THREADS of them) serve every user: a user's uploads and params
   * checks run this many at a time, and this many more wait; one more is refused (429).
   */
  apiCallsPerUser: 1,
  apiWaitingPerUser: 4,
  /** Dry and live runs of custom templates: per user, and sandboxes (worker threads) per node. */
  runsPerUser: 10,
  sandboxesPerNode: 64,
  /** Bars of the upload's smoke run (recorded BTCUSDT 1h closes). */
  smokeBars: 2_000,
} as const

/**
 * The strategy-time budget of a backtest over `bars` bars, in milliseconds (the engine thread's watchdog):
 * derived from the module's measured cost (`smokeUsPerBar`, its upload's smoke run) when there is one,
 * else the flat budget. Why these numbers: docs/decisions/custom-strategies.md ("Budgets that fit the work (issue 34)").
 */
export function jobBudgetMs(bars: number, smokeUsPerBar?: number): number {
  const { jobBaseMs, jobPerBarUs, jobMultiple, jobFloorMs } = SANDBOX_LIMITS
  const flat = jobBaseMs + Math.ceil((bars * jobPerBarUs) / 1000)
  if (smokeUsPerBar === undefined) return flat
  return Math.min(flat, Math.max(jobFloorMs, Math.ceil((bars * smokeUsPerBar * jobMultiple) / 1000)))
}
