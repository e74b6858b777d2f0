import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import https from 'node:https'
import net from 'node:net'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { PerpetuaClient } from '../../src/client/index.js'
import { listenCertificate } from '../../src/cli/webhooks/self-signed.js'
import { tempDir } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { killChildren, parseSingleJsonLine, poll, runCli, type ServerProcess, startCli, startServe } from './cli-process.js'

// `perpetua webhooks listen` as a developer runs it: a real `perpetua serve` configured as the
// listener says (WEBHOOK_ALLOW_PRIVATE_HOSTS, WEBHOOK_CA_FILE naming the listener's own certificate),
// real deliveries through the server's pipeline, and a forged one sent straight to the listener.

describe('perpetua webhooks listen', () => {
  const dataDir = tempDir('cli-listen')
  const config = tempDir('cli-listen-config') // XDG_CONFIG_HOME: the certificate lands here
  let server: ServerProcess
  let env: Record<string, string>
  let client: PerpetuaClient
  let certFile: string

  before(async () => {
    // What the first `webhooks listen` makes; the server reads WEBHOOK_CA_FILE at start, so it comes first.
    certFile = listenCertificate(path.join(config, 'perpetua', 'webhooks-listen')).certFile
    server = await startServe({ DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: certFile, WORKERS: '1' })
    const created = await runCli(['keys', 'create', '--email', 'dev@example.test', '--scopes', 'webhooks:read,webhooks:write'], { DATA_DIR: dataDir })
    assert.equal(created.code, 0, created.stderr)
    const key = parseSingleJsonLine(created.stdout) as KeyPair
    env = { XDG_CONFIG_HOME: config, PERPETUA_URL: server.url, PERPETUA_API_KEY: key.api_key, PERPETUA_API_SECRET: key.api_secret }
    client = new PerpetuaClient({ baseUrl: server.url, apiKey: key.api_key, apiSecret: key.api_secret })
  })
  after(async () => {
    await killChildren()
    fs.rmSync(dataDir, { recursive: true, force: true })
    fs.rmSync(config, { recursive: true, force: true })
  })

  it('subscribes itself, prints verified deliveries, refuses a forged one, and deletes its webhook on Ctrl-C', async () => {
    const listen = startCli(['webhooks', 'listen', '--port', '0'], env)
    const url = await poll(`the listener to be ready:\n${listen.output().stderr}`, 60_000, () => /listening on (https:\/\/127\.0\.0\.1:\d+\/) for (wh_[0-9a-f]+)/.exec(listen.output().stderr) ?? undefined)
    const [, receiverUrl, webhookId] = url
    // The set-up check on start: the server's own test event reached the listener and verified.
    assert.match(listen.output().stdout, /^\S+Z webhook\.test evt_test_[0-9a-f]+ signature verified /m)
    const [webhook] = (await client.webhooks.list()).data
    assert.equal(webhook?.id, webhookId)
    assert.equal(webhook?.url, receiverUrl)

    // A delivery the server sends on request, as `perpetua webhooks test` does.
    const tested = await runCli(['webhooks', 'test', webhookId!, '--event-type', 'backtest.job_done'], env)
    assert.equal(tested.code, 0, tested.stderr)
    const eventId = /^(evt_test_[0-9a-f]+) delivered: HTTP 200/.exec(tested.stdout)?.[1]
    assert.ok(eventId, tested.stdout)
    await poll('the listener to print the test delivery', 10_000, () => (listen.output().stdout.includes(eventId) ? true : undefined))
    assert.match(listen.output().stdout, new RegExp(`^\\S+Z backtest\\.job_done ${eventId} signature verified \\{`, 'm'))

    // A forged delivery: a signature made with another secret. The listener says so and answers 400.
    const body = JSON.stringify({ id: 'evt_forged', type: 'strategy.deployed', timestamp: new Date().toISOString(), data: { strategy_id: 'strat_x' } })
    const timestamp = String(Math.floor(Date.now() / 1000))
    const forged = crypto.createHmac('sha256', crypto.randomBytes(24)).update(`evt_forged.${timestamp}.${body}`).digest('base64')
    const status = await post(receiverUrl!, fs.readFileSync(certFile, 'utf8'), body, { 'webhook-id': 'evt_forged', 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${forged}` })
    assert.equal(status, 400)
    await poll('the listener to print the forged delivery', 10_000, () => (listen.output().stdout.includes('evt_forged') ? true : undefined))
    assert.match(listen.output().stdout, /^\S+Z strategy\.deployed evt_forged signature NOT verified \(no v1 signature matches: wrong secret, or the body was changed\) \{"strategy_id":"strat_x"\}$/m)

    listen.child.kill('SIGINT')
    const code = await new Promise<number | null>((resolve) => listen.child.once('close', resolve))
    assert.equal(code, 0, listen.output().stderr)
    assert.match(listen.output().stderr, new RegExp(`deleted ${webhookId}`))
    assert.deepEqual((await client.webhooks.list()).data, [])
  })

  it('--webhook ID listens for an existing webhook, verifying with --secret, and leaves it in place', async () => {
    const port = await freePort()
    const url = `https://127.0.0.1:${port}/`
    const existing = await client.webhooks.create({ url, events: ['backtest.*'] })
    const listen = startCli(['webhooks', 'listen', '--port', String(port), '--webhook', existing.id, '--secret', existing.secret], env)
    await poll(`the listener to be ready:\n${listen.output().stderr}`, 60_000, () => (listen.output().stderr.includes(`listening on ${url} for ${existing.id}; Ctrl-C stops\n`) ? true : undefined))
    assert.match(listen.output().stdout, /^\S+Z webhook\.test evt_test_[0-9a-f]+ signature verified /m)
    listen.child.kill('SIGINT')
    assert.equal(await new Promise<number | null>((resolve) => listen.child.once('close', resolve)), 0, listen.output().stderr)
    assert.doesNotMatch(listen.output().stderr, /deleted/)
    assert.deepEqual((await client.webhooks.list()).data.map((w) => w.id), [existing.id])
    await client.webhooks.delete(existing.id)
  })

  it('with a certificate the server does not trust, says at once how the server must be started', async () => {
    const elsewhere = tempDir('cli-listen-other') // a first run elsewhere: a new certificate the server never read
    try {
      const listen = startCli(['webhooks', 'listen', '--port', '0'], { ...env, XDG_CONFIG_HOME: elsewhere })
      await poll(`the listener to be ready:\n${listen.output().stderr}`, 60_000, () => (listen.output().stderr.includes('listening on') ? true : undefined))
      const newCert = path.join(elsewhere, 'perpetua', 'webhooks-listen', 'cert.pem')
      assert.ok(fs.existsSync(newCert))
      const setup = `WEBHOOK_ALLOW_PRIVATE_HOSTS=true WEBHOOK_CA_FILE=${newCert}`
      assert.ok(listen.output().stderr.includes(`made a self-signed certificate for 127.0.0.1 in ${newCert}; the server must be started (once) with\n  ${setup}\n`), listen.output().stderr)
      assert.match(listen.output().stderr, /the server could not deliver wh_[0-9a-f]+'s test event to https:\/\/127\.0\.0\.1:\d+\/: .+\nstart perpetua serve with /)
      assert.ok(listen.output().stderr.includes(`start perpetua serve with ${setup} (then restart this listen`))
      assert.equal(listen.output().stdout, '', 'a delivery arrived through an untrusted certificate')
      listen.child.kill('SIGINT')
      assert.equal(await new Promise<number | null>((resolve) => listen.child.once('close', resolve)), 0, listen.output().stderr)
      assert.deepEqual((await client.webhooks.list()).data, [])
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true })
    }
  })

  it('names the port that is taken and how to choose another', async () => {
    const first = startCli(['webhooks', 'listen', '--port', '0'], env)
    const port = await poll('the first listener to be ready', 60_000, () => /listening on https:\/\/127\.0\.0\.1:(\d+)\//.exec(first.output().stderr)?.[1])
    const second = await runCli(['webhooks', 'listen', '--port', port], env)
    assert.equal(second.code, 1)
    assert.match(second.stderr, new RegExp(`webhooks listen cannot listen: port ${port} on 127\\.0\\.0\\.1 is already in use by another process; choose another with --port`))
    assert.doesNotMatch(second.stderr, /\n\s+at /, 'a stack trace')
    first.child.kill('SIGINT')
    await new Promise((resolve) => first.child.once('close', resolve))
  })
})

/** A port nothing listens on now (the kernel's pick, released). */
async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

function post(url: string, ca: string, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = https.request(url, { method: 'POST', ca, headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode ?? 0))
    })
    request.on('error', reject)
    request.end(body)
  })
}
