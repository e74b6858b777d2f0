import { PerpetuaError } from '../../../src/client/index.js'

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => {
      clearTimeout(timer)
      resolve()
    }, { once: true })
  })
}

/**
 * `read()`, waiting out a 429's Retry-After up to five times: one job or sweep may be read once per
 * 5 s (spec Limits), and a page opened twice within that is told so.
 */
export async function waitingOutRateLimit<T>(read: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await read()
    } catch (error) {
      if (!(error instanceof PerpetuaError) || error.status !== 429 || attempt >= 5) throw error
      await sleep(error.retryAfterMs ?? 5_000, signal)
    }
  }
}
