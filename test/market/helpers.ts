import net from 'node:net'
import type { LightMyRequestResponse } from 'fastify'
import { startTestApp, type TestApp } from '../support/app.js'

/** A loopback port where nothing listens: bound once by us, then released. */
export async function deadPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** GET through the app, with how long it took. */
export async function timedGet(t: TestApp, url: string, headers: Record<string, string> = {}): Promise<{ res: LightMyRequestResponse; ms: number }> {
  const started = performance.now()
  const res = await t.app.inject({ method: 'GET', url, headers })
  return { res, ms: performance.now() - started }
}

/** The replay exchange's own answer, read directly (what the gateway should agree with). */
export async function upstreamJson<T = unknown>(t: TestApp, path: string): Promise<T> {
  const res = await fetch(`${t.replay!.url}${path}`)
  if (!res.ok) throw new Error(`${path} answered ${res.status}`)
  return (await res.json()) as T
}

/** The replay exchange's own status and body text, read directly (what a mirror endpoint should forward). */
export async function upstreamText(t: TestApp, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${t.replay!.url}${path}`)
  return { status: res.status, body: await res.text() }
}

/** Calls the replay exchange saw on `path` so far. */
export function callsTo(t: TestApp, path: string): number {
  return t.replay!.stats().byPath[path] ?? 0
}

/** Polls `condition` until it holds, failing after `timeoutMs`. */
export async function eventually(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

export const DECIMAL = /^-?\d+(\.\d+)?$/

/**
 * An app over a replay exchange whose clock stands still: the mirror's answers and direct reads of
 * the exchange are of one moment, so they compare byte for byte.
 */
export function startFrozenMarketApp(): Promise<TestApp> {
  return startTestApp('pglite', {}, { replay: { now: () => Date.UTC(2026, 10, 1) } })
}
