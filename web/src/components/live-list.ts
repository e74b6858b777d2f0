import { useEffect, useState } from 'preact/hooks'
import type { Page } from '../api/types.js'
import { toError } from './async.js'

const ACTIVE = new Set(['queued', 'running'])
/** How often the first page is read again while a row on it is queued or running. */
const REFRESH_MS = 2_000

/**
 * A newest-first list of jobs or sweeps, 20 a page: the first page on mount, read again every 2 s while
 * any row is queued or running (older pages already loaded stay), and `older()` for the next page.
 */
export function useLiveList<T extends { id: string; status: string; submitted_at: string }>(readPage: (cursor: string | null) => Promise<Page<T>>) {
  const [rows, setRows] = useState<T[]>([])
  const [cursor, setCursor] = useState<string | null>(null)
  const [error, setError] = useState<Error>()

  const merge = (page: Page<T>, append: boolean) => {
    setRows((previous) => {
      if (append) return [...previous, ...page.data.filter((row) => !previous.some((p) => p.id === row.id))]
      const fresh = new Map(page.data.map((row) => [row.id, row]))
      // Keep older pages already loaded; the first page replaces what it covers.
      return [...page.data, ...previous.filter((p) => !fresh.has(p.id) && p.submitted_at < (page.data.at(-1)?.submitted_at ?? ''))]
    })
    if (append || rows.length === 0) setCursor(page.next_cursor)
  }
  const loadFirst = () => readPage(null).then((page) => merge(page, false), (e: unknown) => setError(toError(e)))
  useEffect(() => {
    void loadFirst()
  }, [])
  const running = rows.some((row) => ACTIVE.has(row.status))
  useEffect(() => {
    if (!running) return
    const timer = setInterval(() => void loadFirst(), REFRESH_MS)
    return () => clearInterval(timer)
  }, [running])
  const older = cursor ? () => void readPage(cursor).then((page) => merge(page, true), (e: unknown) => setError(toError(e))) : undefined
  return { rows, error, older }
}
