import { useState } from 'preact/hooks'

/** Long tables show this many rows at a time. */
export const PAGE_ROWS = 100

/** `items` a page at a time: the rows in sight, which page, how many, and the setter. */
export function usePages<T>(items: T[], size = PAGE_ROWS) {
  const [page, setPage] = useState(0)
  const pages = Math.max(1, Math.ceil(items.length / size))
  const current = Math.min(page, pages - 1)
  return { rows: items.slice(current * size, current * size + size), page: current, pages, setPage }
}

/** Previous / "Page n of m" / Next under a table; nothing when everything fits on one page. */
export function Pager({ state, testId }: { state: ReturnType<typeof usePages>; testId: string }) {
  const { page, pages, setPage } = state
  if (pages <= 1) return null
  return (
    <div class="toolbar" data-testid={`${testId}-pager`}>
      <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page + 1} of {pages}
      </span>
      <button type="button" disabled={page + 1 >= pages} onClick={() => setPage(page + 1)} data-testid={`${testId}-next`}>
        Next
      </button>
    </div>
  )
}
