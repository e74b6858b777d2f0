import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.js'
import { issueApiKey } from '../../src/auth/api-keys.js'
import type { Scope } from '../../src/auth/scopes.js'
import { loadConfig } from '../../src/config.js'
import { createServices, type Services } from '../../src/services.js'
import { type Backend, openTestDatabase, type TestDatabase } from './database.js'
import { type KeyPair, signedHeaders } from './signing.js'

/** A clock tests can move; every service of a test app reads time from it. */
export class TestClock {
  constructor(public value = Date.now()) {}
  now = (): number => this.value
  advance(ms: number): void {
    this.value += ms
  }
}

export interface TestApp {
  app: FastifyInstance
  services: Services
  database: TestDatabase
  clock: TestClock
  /** Creates a user (by email) and an API key with these scopes. */
  createKey(scopes: Scope[], email?: string): Promise<KeyPair>
  /** Sends a signed request through app.inject; `body` is sent as the exact JSON text given. */
  signed(key: KeyPair, method: string, url: string, body?: unknown, extraHeaders?: Record<string, string>): Promise<LightMyRequestResponse>
  close(): Promise<void>
}

let emails = 0

/** The whole app over a fresh database of the given backend; env overrides go through loadConfig. */
export async function startTestApp(backend: Backend, env: Record<string, string> = {}): Promise<TestApp> {
  const database = await openTestDatabase(backend)
  const config = loadConfig({ DATA_DIR: database.dataDir, LOG_LEVEL: 'silent', ...env })
  const clock = new TestClock()
  const services = createServices(config, database.handle, clock.now)
  const app = await buildApp(services)
  await app.ready()
  return {
    app,
    services,
    database,
    clock,
    createKey: (scopes, email = `user${++emails}-${process.pid}@example.test`) =>
      issueApiKey(database.handle.db, services.secrets, { email, scopes }),
    signed(key, method, url, body, extraHeaders = {}) {
      clock.advance(1) // a real client's clock moves between requests, so identical requests differ
      const payload = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body)
      return app.inject({
        method: method as 'GET',
        url,
        payload: payload === '' ? undefined : payload,
        headers: {
          ...(payload === '' ? {} : { 'content-type': 'application/json' }),
          ...signedHeaders(key, method, url, payload, clock.now()),
          ...extraHeaders,
        },
      })
    },
    async close() {
      await app.close()
      await database.close()
    },
  }
}
