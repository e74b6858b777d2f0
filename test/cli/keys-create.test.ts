import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { connectDatabase } from '../../src/db/connect.js'
import { createServices } from '../../src/services.js'
import { createServerDatabase, dropServerDatabase, tempDir } from '../support/database.js'
import { type KeyPair, signedHeaders } from '../support/signing.js'
import { killChildren, parseSingleJsonLine, runCli, type ServerProcess, startServe } from './cli-process.js'

const SCOPES = 'strategies:read,strategies:write'

/** The whole stdout must be one JSON line of exactly this shape. */
function parseIssuedKey(stdout: string): KeyPair & { scopes: string[] } {
  const parsed = parseSingleJsonLine(stdout) as Record<string, unknown>
  assert.deepEqual(Object.keys(parsed).sort(), ['api_key', 'api_secret', 'scopes'])
  assert.match(String(parsed.api_key), /^pk_[0-9a-f]+$/)
  assert.equal(typeof parsed.api_secret, 'string')
  assert.ok((parsed.api_secret as string).length >= 32, 'the secret has at least 32 characters')
  assert.deepEqual(parsed.scopes, ['strategies:read', 'strategies:write'])
  return parsed as unknown as KeyPair & { scopes: string[] }
}

function assertRefused(result: { code: number | null; stdout: string; stderr: string }, message: RegExp): void {
  assert.equal(result.code, 2, 'exit status of a usage error')
  assert.equal(result.stdout, '', 'nothing on stdout')
  assert.match(result.stderr, message)
}

async function signedGet(url: string, key: KeyPair, target: string): Promise<Response> {
  return fetch(`${url}${target}`, { headers: signedHeaders(key, 'GET', target) })
}

describe('perpetua keys create on an embedded DATA_DIR', () => {
  const dataDir = tempDir('keys')
  const env = { DATA_DIR: dataDir }
  let server: ServerProcess | undefined
  let keyWithoutServer: KeyPair | undefined

  after(async () => {
    await killChildren()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('prints exactly one line of JSON when no server runs on DATA_DIR, and releases the lock', async () => {
    const result = await runCli(['keys', 'create', '--email', 'Alice@Example.test', '--scopes', SCOPES], env)
    assert.equal(result.code, 0, result.stderr)
    keyWithoutServer = parseIssuedKey(result.stdout)
    assert.equal(fs.existsSync(path.join(dataDir, 'server.lock')), false, 'the data-dir lock is released')
  })

  it('refuses an unknown scope or a bad email without a server, printing nothing on stdout', async () => {
    assertRefused(await runCli(['keys', 'create', '--email', 'a@example.test', '--scopes', 'strategies:read,nope'], env), /unknown scope "nope"/)
    assertRefused(await runCli(['keys', 'create', '--email', 'not-an-email', '--scopes', SCOPES], env), /--email must be an email address/)
  })

  it('goes through a running `perpetua serve` on the same DATA_DIR, and the key works against it', async () => {
    server = await startServe(env)
    const result = await runCli(['keys', 'create', '--email', 'bob@example.test', '--scopes', SCOPES], env)
    assert.equal(result.code, 0, result.stderr)
    const key = parseIssuedKey(result.stdout)

    const res = await signedGet(server.url, key, '/v1/strategies')
    assert.equal(res.status, 200, await res.clone().text())
    assert.deepEqual(((await res.json()) as { data: unknown[] }).data, [])
    // The key made before the server started was stored in the same database.
    assert.ok(keyWithoutServer, 'the first test created a key')
    const earlier = await signedGet(server.url, keyWithoutServer, '/v1/strategies')
    assert.equal(earlier.status, 200)
    // A wrong secret is still refused: the 200s above are the keys working, not a missing check.
    const forged = await signedGet(server.url, { ...key, api_secret: `${key.api_secret}x` }, '/v1/strategies')
    assert.equal(forged.status, 401)
    // The server still owns DATA_DIR: the command did not take its lock.
    assert.equal(Number.parseInt(fs.readFileSync(path.join(dataDir, 'server.lock'), 'utf8'), 10), server.child.pid)
  })

  it('refuses an unknown scope or a bad email through the running server, printing nothing on stdout', async () => {
    assert.ok(server, 'the server of the previous test runs')
    // Both at once; the command refuses them before it calls the server (the same checks as the server's).
    const [badScope, badEmail] = await Promise.all([
      runCli(['keys', 'create', '--email', 'a@example.test', '--scopes', 'market:read,admin'], env),
      runCli(['keys', 'create', '--email', 'a b@example', '--scopes', SCOPES], env),
    ])
    assertRefused(badScope, /unknown scope "admin"/)
    assertRefused(badEmail, /--email must be an email address/)
    const health = await fetch(`${server.url}/readyz`)
    assert.equal(health.status, 200, 'the server keeps serving')
  })
})

describe('perpetua keys create with DATABASE_URL', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, () => {
  const dataDir = tempDir('keys-server')
  const masterKey = crypto.randomBytes(32).toString('base64')
  let databaseUrl: string

  before(async () => {
    databaseUrl = await createServerDatabase()
  })
  after(async () => {
    await killChildren()
    if (databaseUrl) await dropServerDatabase(databaseUrl)
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('prints exactly one line of JSON, and the key verifies in an app on that database', async () => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, MASTER_KEY: masterKey }
    const result = await runCli(['keys', 'create', '--email', 'carol@example.test', '--scopes', SCOPES], env)
    assert.equal(result.code, 0, result.stderr)
    const key = parseIssuedKey(result.stdout)
    assert.equal(fs.existsSync(path.join(dataDir, 'server.lock')), false, 'server mode takes no data-dir lock')

    assertRefused(await runCli(['keys', 'create', '--email', 'carol@example.test', '--scopes', 'bogus'], env), /unknown scope "bogus"/)

    const config = loadConfig({ ...env, LOG_LEVEL: 'silent' })
    const database = await connectDatabase({ databaseUrl, dataDir, poolMax: 2 })
    try {
      const app = await buildApp(createServices(config, database))
      try {
        const ok = await app.inject({ method: 'GET', url: '/v1/strategies', headers: signedHeaders(key, 'GET', '/v1/strategies') })
        assert.equal(ok.statusCode, 200, ok.body)
        const forged = await app.inject({
          method: 'GET',
          url: '/v1/strategies',
          headers: signedHeaders({ ...key, api_secret: 'wrong' }, 'GET', '/v1/strategies'),
        })
        assert.equal(forged.statusCode, 401)
      } finally {
        await app.close()
      }
    } finally {
      await database.close()
    }
  })
})
