/** One page of a cursor list, as every `/v1` list answers. */
export interface Page<T> {
  data: T[]
  next_cursor: string | null
}

/** Every item of every page, fetching the next page only when the caller has consumed this one. */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
  let cursor: string | undefined
  do {
    const page = await fetchPage(cursor)
    yield* page.data
    cursor = page.next_cursor ?? undefined
  } while (cursor !== undefined)
}
