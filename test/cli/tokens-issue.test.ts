import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { AppTokens } from '../../src/auth/app-token.js'
import { loadOrCreateKey } from '../../src/auth/local-keys.js'
import { operatorCommands } from '../../src/control/commands.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { tempDir } from '../support/database.js'
import { killChildren, parseSingleJsonLine, runCli } from './cli-process.js'

interface Issued {
  access_token: string
  token_type: string
  expires_in: number
  user_id: number
  email: string
}

describe('perpetua tokens issue', () => {
  let t: TestApp
  before(async () => {
    t = await startTestApp('pglite', { APP_JWT_TTL: '600' })
  })
  after(() => t.close())

  it('gives a Bearer token that opens the signed-in routes, for the same user on every call', async () => {
    const issue = operatorCommands(t.services)['tokens.issue']!
    const first = (await issue({ email: 'Dev@Example.test' })) as Issued
    assert.equal(first.token_type, 'Bearer')
    assert.equal(first.expires_in, 600)
    assert.equal(first.email, 'dev@example.test')
    const keys = await t.app.inject({ method: 'GET', url: '/v1/api-keys', headers: { authorization: `Bearer ${first.access_token}` } })
    assert.equal(keys.statusCode, 200, keys.body)
    const again = (await issue({ email: 'dev@example.test' })) as Issued
    assert.equal(again.user_id, first.user_id)
    t.clock.advance(601_000)
    const expired = await t.app.inject({ method: 'GET', url: '/v1/api-keys', headers: { authorization: `Bearer ${first.access_token}` } })
    assert.equal(expired.statusCode, 401)
  })

  it('refuses a malformed email', async () => {
    await assert.rejects(operatorCommands(t.services)['tokens.issue']!({ email: 'not-an-email' }), /--email must be an email address/)
  })
})

describe('perpetua tokens issue from the command line', () => {
  const dataDir = tempDir('tokens')
  after(async () => {
    await killChildren()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('prints one JSON line whose token the data dir app-token key verifies', async () => {
    const result = await runCli(['tokens', 'issue', '--email', 'ops@example.test'], { DATA_DIR: dataDir })
    assert.equal(result.code, 0, result.stderr)
    const issued = parseSingleJsonLine(result.stdout) as Issued
    const tokens = new AppTokens(loadOrCreateKey(undefined, dataDir, 'app-jwt.key'), 3600)
    assert.equal(await tokens.verify(issued.access_token), issued.user_id)
    const refused = await runCli(['tokens', 'issue', '--email', 'nope'], { DATA_DIR: dataDir })
    assert.notEqual(refused.code, 0)
    assert.equal(refused.stdout, '')
    assert.match(refused.stderr, /--email must be an email address/)
  })
})
