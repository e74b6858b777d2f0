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

/** `next(a, b)` at once when both are at hand, else once both settle (the first rejection rejects, as Promise.all). */
export function andThenBoth<A, B, U>(a: Soon<A>, b: Soon<B>, next: (a: A, b: B) => Soon<U>): Soon<U> {
  if (a instanceof Promise || b instanceof Promise) return Promise.all([a, b]).then(([x, y]) => next(x, y))
  return next(a, b)
}

/**
 * Ends a callback-style Fastify hook with `value`: at once when it is at hand, else once it settles (a
 * rejection is the hook's error). An async hook costs a promise and a turn of the microtask queue even
 * when every step answers from memory.
 */
export function doneWhen(value: Soon<unknown>, done: (error?: Error) => void): void {
  if (value instanceof Promise) value.then(() => done(), done)
  else done()
}
