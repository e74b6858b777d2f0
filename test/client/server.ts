import { PerpetuaClient, type PerpetuaClientOptions } from '../../src/client/index.js'
import type { Backend } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { startTestApp, type TestApp, type TestAppOptions } from '../support/app.js'

export interface ClientServer {
  t: TestApp
  baseUrl: string
  /** A client of this server signing with the key, on the test app's clock. */
  client(key: KeyPair, options?: Partial<PerpetuaClientOptions>): PerpetuaClient
  close(): Promise<void>
}

/** The whole app listening on a loopback port, for the client to talk HTTP to. */
export async function startClientServer(backend: Backend, env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<ClientServer> {
  const t = await startTestApp(backend, env, options)
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  const baseUrl = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`
  return {
    t,
    baseUrl,
    client: (key, extra = {}) => new PerpetuaClient({ baseUrl, apiKey: key.api_key, apiSecret: key.api_secret, now: t.clock.now, ...extra }),
    close: () => t.close(),
  }
}

/** fetch that records the status of every answer, to see what the client met on the wire. */
export function recordingFetch(): { fetch: typeof globalThis.fetch; calls: { method: string; url: string; status: number; retryAfter: string | null }[] } {
  const calls: { method: string; url: string; status: number; retryAfter: string | null }[] = []
  return {
    calls,
    fetch: async (input, init) => {
      const response = await globalThis.fetch(input, init)
      calls.push({ method: init?.method ?? 'GET', url: String(input), status: response.status, retryAfter: response.headers.get('retry-after') })
      return response
    },
  }
}
