/**
 * A value at hand, or one still to come. The signed read's steps (key lookup, replay claim, weight charge)
 * answer from memory on an embedded node: returned as is, a step costs no promise and no turn of the event
 * loop (the access hook cost ~20 µs in the server beyond its HMAC and admission: docs/decisions/performance.md,
 * issue 36). A step that must wait (a cache miss, PostgreSQL) returns its promise as before; `await` takes either.
 */
export type Soon<T> = T | Promise<T>

/** `next(value)` at once when `value` is at hand, else once it settles. */
export function andThen<T, U>(value: Soon<T>, next: (value: T) => Soon<U>): Soon<U> {
  return value instanceof Promise ? value.then(next) : next(value)
}
