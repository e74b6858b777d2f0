import type { Job, JobCreate } from '../../api/types.js'
import { navigate } from '../../router.js'

/** The query parameter that carries a configuration to repeat into the backtests page's form. */
const PARAM = 'repeat'

/**
 * Opens the backtests page with its form filled with `config` (a sweep's run). The configuration
 * travels in the URL, so a reload or a shared link opens the same form.
 */
export function backtestThis(config: JobCreate): void {
  navigate(`/backtests?${PARAM}=${encodeURIComponent(JSON.stringify(config))}`)
}

/** The configuration the URL asks the form to start from, or undefined (none, or not a JSON object). */
export function configToRepeat(search: string): Partial<JobCreate> | undefined {
  const raw = new URLSearchParams(search).get(PARAM)
  if (!raw) return undefined
  try {
    const parsed: unknown = JSON.parse(raw)
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Partial<JobCreate>) : undefined
  } catch {
    return undefined
  }
}

/**
 * A job's configuration as a request to run it again, `change` laid over it: the fields the form sends
 * (a custom template keeps its version and seed while the user keeps the template).
 */
export function repeatable(job: Job, change: Partial<JobCreate> = {}): JobCreate {
  const { template_id, template_version, seed, params, symbols, timeframe, start, end, capital, leverage, fee_model, fee_bps, slippage_bps, exits } = job.config
  const config = { template_id, template_version, seed, params, symbols, timeframe, start, end, capital, leverage, fee_model, fee_bps, slippage_bps, exits, ...change }
  return Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined && value !== null)) as JobCreate
}
