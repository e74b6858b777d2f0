/**
 * The question a live deploy asks before it sends (issue 35: a forgotten flag must not trade real money
 * unasked). Shared by the CLI's `strategies deploy --live` and the dashboard's deploy form, so both name
 * the same strategy, exchange key and capital in the same words. Pure: the callers fetch what it names.
 */

/** An exchange key as GET /v1/exchange-keys lists it (newest first), the fields the question needs. */
export interface ListedExchangeKey {
  id: string
  label: string | null
  verification_status: string
}

/** The API's hint to a live deploy without a key; the CLI shows its flag in its place. */
export const DRY_RUN_HINT = 'deploy with dry_run true'

/**
 * The key a live deploy will trade, in words: the one asked for, else the newest verified one (the server's
 * rule, DESIGN §6). `keys` undefined: the credentials cannot list keys (a signed API key gets 403 there),
 * so the words say which key the server will pick instead of guessing its id.
 */
export function liveDeployKeyText(keys: ListedExchangeKey[] | undefined, requested: string | undefined): string {
  if (keys === undefined) return requested !== undefined ? `exchange key ${requested}` : 'your newest verified exchange key'
  const key = requested !== undefined ? keys.find((k) => k.id === requested) : keys.find((k) => k.verification_status === 'verified')
  if (!key) return requested !== undefined ? `exchange key ${requested} (not one of yours)` : 'no verified exchange key (the deploy will be refused)'
  return `exchange key ${key.id}${key.label ? ` (${key.label})` : ''}`
}

/** "Deploy strategy strat_… (trend) LIVE on exchange key xk_… (demo) with 500 USDT at 2x? Real orders will be placed." */
export function liveDeployQuestion(strategy: { id: string; name: string }, keyText: string, capital: string, leverage: number): string {
  return `Deploy strategy ${strategy.id} (${strategy.name}) LIVE on ${keyText} with ${capital} USDT at ${leverage}x? Real orders will be placed.`
}
