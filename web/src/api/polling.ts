import { PerpetuaError, type Page } from '../../../src/client/index.js'

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

/** The row with `id` in a list read page by page (newest first): a row being followed is at most `pages` pages in. */
export async function findInPages<T extends { id: string }>(id: string, readPage: (cursor: string | null) => Promise<Page<T>>, pages = 5): Promise<T | undefined> {
  let cursor: string | null = null
  for (let page = 0; page < pages; page++) {
    const result = await readPage(cursor)
    const found = result.data.find((row) => row.id === id)
    if (found || !result.next_cursor) return found
    cursor = result.next_cursor
  }
  return undefined
}

/**
 * Follows a job or sweep through its list every `everyMs` until `ended` says it has: `onUpdate` gets
 * each changed row (the ended one too), `finish` reads what the list leaves out once it has ended.
 * Returns the stop function.
 */
export function followInList<T extends { id: string; status: string; progress: number }>(options: {
  first: T
  everyMs: number
  find: (id: string) => Promise<T | undefined>
  ended: (row: T) => boolean
  onUpdate: (row: T) => void
  onError: (error: Error) => void
  finish?: (row: T, signal: AbortSignal) => Promise<T>
}): () => void {
  const controller = new AbortController()
  const { signal } = controller
  void (async () => {
    let latest = options.first
    try {
      while (!signal.aborted && !options.ended(latest)) {
        await sleep(options.everyMs, signal)
        const listed = await options.find(latest.id)
        if (signal.aborted) return
        if (listed && (listed.status !== latest.status || listed.progress !== latest.progress)) {
          latest = listed
          if (!options.ended(listed) || !options.finish) options.onUpdate(listed)
        }
      }
      if (!signal.aborted && options.finish) options.onUpdate(await options.finish(latest, signal))
    } catch (error) {
      if (!signal.aborted) options.onError(error instanceof Error ? error : new Error(String(error)))
    }
  })()
  return () => controller.abort()
}
