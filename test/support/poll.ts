/**
 * Calls `check` until it returns something other than undefined; throws after `timeoutMs`. Never a fixed sleep.
 * `intervalMs` spaces the checks (default 20 ms): a check that spends the exchange's request weight, which the
 * processes under test share with it, is asked less often.
 */
export async function poll<T>(what: string, timeoutMs: number, check: () => T | undefined | Promise<T | undefined>, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
