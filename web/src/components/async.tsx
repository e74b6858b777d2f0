import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { withoutApiAdvice } from './api-advice.js'

export interface AsyncState<T> {
  data: T | undefined
  error: Error | undefined
  loading: boolean
  reload: () => void
}

/** Runs `load` when `deps` change; a result that arrives after a newer load started is dropped. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): AsyncState<T> {
  const [state, setState] = useState<{ data: T | undefined; error: Error | undefined; loading: boolean }>({ data: undefined, error: undefined, loading: true })
  const generation = useRef(0)
  const run = useCallback(() => {
    const mine = ++generation.current
    setState((previous) => ({ ...previous, loading: true }))
    load().then(
      (data) => mine === generation.current && setState({ data, error: undefined, loading: false }),
      (error: unknown) => mine === generation.current && setState((previous) => ({ data: previous.data, error: toError(error), loading: false })),
    )
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps)
  useEffect(() => {
    run()
    return () => {
      generation.current++
    }
  }, [run])
  return { ...state, reload: run }
}

export function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}

/** An error as the page shows it: the API's message, less its advice to API callers (the page acts instead). */
export function ErrorBox({ error }: { error: Error | undefined | null }) {
  if (!error) return null
  return (
    <p class="error" role="alert" data-testid="error">
      {withoutApiAdvice(error.message)}
    </p>
  )
}

export function Loading({ what }: { what: string }) {
  return <p class="muted">Loading {what}…</p>
}

/** A horizontally scrolling box, so wide tables stay readable on a phone. */
export function TableWrap({ children }: { children: ComponentChildren }) {
  return <div class="table-wrap">{children}</div>
}

/** Below a live list: what an empty list says (once read without an error), and the next page's button. */
export function ListFooter({ empty, shown, error, older }: { empty: string; shown: number; error: Error | undefined; older: (() => void) | undefined }) {
  return (
    <>
      {shown === 0 && !error ? <p class="muted">{empty}</p> : null}
      {older ? (
        <button type="button" onClick={older}>
          Older
        </button>
      ) : null}
    </>
  )
}
