import type { PerpetuaClient } from '../client/perpetua-client.js'

/** How output names the template a job, sweep or strategy runs (`atr-breakout v2`; a built-in by its id). */
export type TemplateNamer = (id: string, version?: number | null) => string

/**
 * The namer for output showing these template ids. A custom template (tpl-…) goes by its name, read
 * from GET /v1/templates (which lists the caller's own to a key with strategies:read); the call is made
 * only when a custom id is shown. An id it does not list (deleted, or a key without that scope) stays an id.
 */
export async function templateNames(client: PerpetuaClient, ids: readonly string[]): Promise<TemplateNamer> {
  const names = new Map<string, string>()
  if (ids.some((id) => id.startsWith('tpl-'))) {
    for (const template of await client.templates.list()) if (template.custom) names.set(template.id, template.name)
  }
  return (id, version) => (version ? `${names.get(id) ?? id} v${version}` : (names.get(id) ?? id))
}

/** A header line's template: the name with its id beside it, so the id stays at hand to copy. */
export function templateWithId(name: TemplateNamer, id: string, version?: number | null): string {
  const named = name(id, version)
  return named.startsWith(id) ? named : `${named} (${id})`
}
