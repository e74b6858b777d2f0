/**
 * Who the dashboard acts as. Held in this module's memory only — never localStorage, sessionStorage,
 * cookies or the URL — so a reload or a closed tab signs out and nothing is left on the device.
 */
export type Credentials =
  | { kind: 'token'; token: string }
  | { kind: 'key'; apiKey: string; apiSecret: string }

let current: Credentials | null = null
const listeners = new Set<() => void>()

export function credentials(): Credentials | null {
  return current
}

export function signIn(next: Credentials): void {
  current = next
  for (const listener of listeners) listener()
}

export function signOut(): void {
  current = null
  for (const listener of listeners) listener()
}

/** Calls `listener` on every sign-in and sign-out; returns the unsubscribe function. */
export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}
