import { api } from '../api/endpoints.js'
import type { TemplateInfo } from '../api/types.js'
import { useAsync } from './async.js'

let cached: Promise<TemplateInfo[]> | undefined

/** The template catalogue, read once per sign-in session (it is fixed while the server runs). */
export function useTemplates() {
  return useAsync(() => {
    cached ??= api.templates().then((r) => r.data, (error: unknown) => {
      cached = undefined
      throw error
    })
    return cached
  }, [])
}

export { TIMEFRAMES, TIMEFRAME_MS } from '../../../src/strategies/timeframes.js'
export { FEE_MODELS } from '../../../src/engine/fees.js'
