/** The scopes an API key may carry (DESIGN §5). An app token carries all of them. */
export const SCOPES = [
  'market:read',
  'strategies:read',
  'strategies:write',
  'backtests:read',
  'backtests:write',
  'webhooks:read',
  'webhooks:write',
] as const

export type Scope = (typeof SCOPES)[number]

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}

/** Parses "a,b" into scopes; throws naming the first unknown one. */
export function parseScopes(list: string): Scope[] {
  const scopes = list.split(',').map((s) => s.trim()).filter(Boolean)
  const unknown = scopes.find((s) => !isScope(s))
  if (unknown !== undefined) throw new Error(`unknown scope "${unknown}"; known scopes: ${SCOPES.join(', ')}`)
  if (scopes.length === 0) throw new Error(`at least one scope is required; known scopes: ${SCOPES.join(', ')}`)
  return [...new Set(scopes)] as Scope[]
}

/**
 * Why a key is refused for want of `scope`, and the way out: a key's scopes are fixed when it is made, so the fix is a
 * key that has it (issue 35: "a missing scope says how to fix it").
 */
export function lacksScope(scope: Scope): string {
  return `this API key lacks the scope ${scope}; a key's scopes never change: create a key with ${scope} among its scopes (POST /v1/api-keys, or perpetua keys create --scopes …,${scope})`
}
