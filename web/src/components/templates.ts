import { api } from '../api/endpoints.js'
import { client } from '../api/session.js'
import type { TemplateInfo } from '../api/types.js'
import { useAsync } from './async.js'

/**
 * The template catalogue, read once and shared by every form. It holds the user's own templates too,
 * so it belongs to one signed-in client (another sign-in reads it anew) and is forgotten whenever the
 * user uploads or deletes a template.
 */
let cached: { owner: object; list: Promise<TemplateInfo[]> } | undefined

export function useTemplates() {
  return useAsync(() => {
    const owner = client()
    if (cached?.owner !== owner) {
      const list = api.templates().catch((error: unknown) => {
        if (cached?.list === list) cached = undefined
        throw error
      })
      cached = { owner, list }
    }
    return cached.list
  }, [])
}

/** After an upload or a delete: the next form reads the catalogue again. */
export function forgetTemplates(): void {
  cached = undefined
}

/** How a form names a template: a built-in by its id, one of the user's by its name and id. */
export function templateLabel(template: TemplateInfo): string {
  return template.custom ? `${template.name} (${template.id})` : template.id
}

export { TIMEFRAMES, TIMEFRAME_MS } from '../../../src/strategies/timeframes.js'
export { FEE_MODELS } from '../../../src/engine/fees.js'

/**
 * How a page names the template a job, sweep or strategy runs: one of the user's by its name and the
 * version pinned (`atr breakout v2`), a built-in by its id. The name comes from the catalogue (GET
 * /v1/templates lists the user's own to strategies:read); a template it does not hold (deleted) keeps its id.
 */
export function templateName(templates: readonly TemplateInfo[] | undefined, id: string, version?: number | null): string {
  const found = templates?.find((template) => template.id === id)
  const name = found?.custom ? found.name : id
  return version ? `${name} v${version}` : name
}
