/** A value computed on first use and kept: big recorded series load only when a request needs them. */
export function lazy<T>(make: () => T): () => T {
  let made = false
  let value: T
  return () => {
    if (!made) {
      value = make()
      made = true
    }
    return value
  }
}
