import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { signIn } from '../auth/bearer.js'
import { startReplay, startTestApp, type ReplayExchange, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { type HttpsReceiver, startHttpsReceiver, testCertificates } from '../support/https-receiver.js'
import { type KnownSecret, memoryLogger, secretsFound, textColumnDump } from '../support/secret-scan.js'

const GOOD = { api_key: 'SCANkey0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789ab', api_secret: 'SCANsecret0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789' }
const WRONG_SECRET = 'SCANwrong-secret-0123456789abcdefABCDEF0123456789abcdefABCDEF01'
const PENDING = { api_key: 'SCANpending0123456789abcdef', api_secret: 'SCANpending-secret-0123456789abcdef' }

for (const backend of backends()) {
  describe(`no secret in plain text at rest or in the logs (${backend})`, () => {
    let t: TestApp
    let replay: ReplayExchange
    let receiver: HttpsReceiver
    const logs = memoryLogger()
    const secrets: KnownSecret[] = []

    before(async () => {
      let app: TestApp | undefined
      replay = await startReplay({ now: () => app?.clock.now() ?? Date.now(), accounts: [{ apiKey: GOOD.api_key, secretKey: GOOD.api_secret }] })
      receiver = await startHttpsReceiver()
      const webhookEnv = { WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: testCertificates().caFile }
      app = t = await startTestApp(backend, { UPSTREAM_URL: replay.url, ...webhookEnv }, { logger: logs.logger })

      // Every way a secret enters: a key from the operator CLI path, keys created, rotated and
      // revoked over the API, exchange keys verified, refused and left pending, the lookups, and
      // webhook secrets: created, then used to sign a delivered and a failed test delivery.
      const cliKey = await t.createKey(['strategies:read'], 'scan@example.test')
      secrets.push({ label: 'API secret (keys create)', value: cliKey.api_secret })
      assert.equal((await t.signed(cliKey, 'GET', '/v1/strategies')).statusCode, 200)
      assert.equal((await t.signed({ ...cliKey, api_secret: 'not-the-secret' }, 'GET', '/v1/strategies')).statusCode, 401)

      const user = await signIn(t, 'scan@example.test')
      const send = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
        t.app.inject({ method, url, headers: user.headers, ...(payload ? { payload } : {}) })
      const created = (await send('POST', '/v1/api-keys', { name: 'scanned', scopes: ['strategies:read'] })).json() as { id: string; secret: string }
      secrets.push({ label: 'API secret (created)', value: created.secret })
      const rotated = (await send('POST', `/v1/api-keys/${created.id}/rotate`)).json() as { secret: string }
      secrets.push({ label: 'API secret (rotated)', value: rotated.secret })
      assert.equal((await t.signed({ api_key: created.id, api_secret: rotated.secret }, 'GET', '/v1/strategies')).statusCode, 200)
      const revoked = (await send('POST', '/v1/api-keys', { name: 'revoked', scopes: ['market:read'] })).json() as { id: string; secret: string }
      secrets.push({ label: 'API secret (revoked)', value: revoked.secret })
      assert.equal((await send('DELETE', `/v1/api-keys/${revoked.id}`)).statusCode, 204)

      secrets.push({ label: 'exchange secret (verified)', value: GOOD.api_secret })
      assert.equal((await send('POST', '/v1/exchange-keys', GOOD)).json().verification_status, 'verified')
      const other = await signIn(t, 'scan-other@example.test')
      secrets.push({ label: 'exchange secret (refused)', value: WRONG_SECRET })
      const refused = await t.app.inject({ method: 'POST', url: '/v1/exchange-keys', headers: other.headers, payload: { ...GOOD, api_secret: WRONG_SECRET } })
      assert.equal(refused.json().verification_status, 'failed')
      const remove = replay.faults.add({ path: '/fapi/v2/account', status: 503, times: 1 })
      secrets.push({ label: 'exchange secret (pending)', value: PENDING.api_secret })
      const third = await signIn(t, 'scan-pending@example.test')
      const pending = await t.app.inject({ method: 'POST', url: '/v1/exchange-keys', headers: third.headers, payload: PENDING })
      assert.equal(pending.json().verification_status, 'pending')
      remove()

      const hookKey = await t.createKey(['webhooks:read', 'webhooks:write'], 'scan@example.test')
      for (const path of ['/ok', '/fails']) {
        const hook = await t.signed(hookKey, 'POST', '/v1/webhooks', { url: `${receiver.url}${path}`, events: ['*'] })
        assert.equal(hook.statusCode, 200, hook.body)
        secrets.push({ label: `webhook secret (${path})`, value: hook.json().secret as string })
        receiver.answer = () => ({ status: path === '/ok' ? 204 : 500 })
        const test = await t.signed(hookKey, 'POST', `/v1/webhooks/${hook.json().id}/test`, {})
        assert.equal(test.json().delivered, path === '/ok', test.body)
      }

      t.clock.advance(60_001)
      assert.equal((await t.app.inject({ method: 'POST', url: '/api-key/verify', payload: { email: 'scan@example.test' } })).json().success, true)
      assert.equal((await t.app.inject({ method: 'GET', url: '/api-key/status/scan-other@example.test' })).json().verification_status, 'failed')
      assert.equal((await t.app.inject({ method: 'POST', url: '/api-key/verify', payload: { email: 'scan-pending@example.test' } })).json().success, false)
    })
    after(async () => {
      await t.close()
      await replay.close()
      await receiver.close()
    })

    it('finds no API, exchange or webhook secret in any text or JSON column of the database', async () => {
      const dump = await textColumnDump(t.database.handle.db)
      // The dump reaches the sealed columns (so an empty dump cannot pass by accident).
      const sealed = dump.filter((cell) => /\.(secret_enc|api_secret_enc|api_key_enc)$/.test(cell.where))
      assert.ok(sealed.length >= 9, `sealed cells: ${sealed.length}`)
      assert.ok(sealed.every((cell) => cell.text.startsWith('v1.')))
      assert.ok(dump.some((cell) => cell.where === 'public.events.data' && cell.text.includes('rotated_at')), 'JSON columns are dumped')
      assert.deepEqual(secretsFound(dump, secrets), [])
    })

    it('finds no secret in the logs, which did record the requests', () => {
      const lines = logs.lines()
      assert.ok(lines.length >= 20, `only ${lines.length} log lines`)
      assert.ok(lines.some((line) => line.text.includes('/v1/exchange-keys')))
      assert.deepEqual(secretsFound(lines, secrets), [])
    })

    it('would notice a secret that is there (the scan itself works)', async () => {
      const dump = await textColumnDump(t.database.handle.db)
      const email = { label: 'an email stored in plain text', value: 'scan-other@example.test' }
      assert.deepEqual(secretsFound(dump, [email]), ['an email stored in plain text in public.users.email'])
    })
  })
}
