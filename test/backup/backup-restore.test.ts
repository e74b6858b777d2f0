import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { after, before, describe, it } from 'node:test'
import { killChildren, parseSingleJsonLine, runCli, type ServerProcess, startServe } from '../cli/cli-process.js'
import { SMA } from '../custom-templates/modules.js'
import { FAST_PARAMS } from '../live/backtest-parity.js'
import { type ReplayExchange, startReplay } from '../support/app.js'
import { ONE_MINUTE_RANGE_JOB } from '../support/backtest-job.js'
import { tempDir } from '../support/database.js'
import { type HttpsReceiver, startHttpsReceiver, testCertificates, verifyStandardWebhook } from '../support/https-receiver.js'
import { poll } from '../support/poll.js'

// `perpetua backup` of a running embedded server while a dry run trades on the replay exchange and backtest jobs
// complete, `perpetua restore` into a new DATA_DIR, and a server on the copy: the same users, keys, strategies,
// template versions, job results and webhooks, and the run goes on from its last bar.

const EXCHANGE_SECRET = `exsecret${crypto.randomBytes(12).toString('hex')}`

interface Api {
  call(method: string, target: string, body?: unknown): Promise<{ status: number; json: any }>
}

function api(url: string, token: string): Api {
  return {
    async call(method, target, body) {
      const res = await fetch(`${url}${target}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      const text = await res.text()
      return { status: res.status, json: text ? JSON.parse(text) : undefined }
    },
  }
}

async function ok(api: Api, method: string, target: string, body?: unknown): Promise<any> {
  const res = await api.call(method, target, body)
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${target}: ${res.status} ${JSON.stringify(res.json)}`)
  return res.json
}

/** Polls a backtest job until done, as a client must: the API answers 429 to a poll within 5 s of the last. */
async function jobDone(a: Api, id: string): Promise<any> {
  return poll(`job ${id} to complete`, 180_000, async () => {
    const res = await a.call('GET', `/v1/backtest/jobs/${id}`)
    if (res.status === 200 && res.json.status === 'done') return res.json
    assert.ok(res.status === 200 || res.status === 429, JSON.stringify(res.json))
    assert.ok(res.status === 429 || res.json.status === 'queued' || res.json.status === 'running', JSON.stringify(res.json))
    return undefined
  }, 5_000)
}

/** A webhook's subscription, without its delivery counters (which move on both servers after the backup). */
function subscription(webhook: Record<string, unknown>): Record<string, unknown> {
  const { consecutive_failures: _f, last_delivery_at: _d, last_success_at: _s, ...rest } = webhook
  return rest
}

/** The payload of a backup file (after its two text lines), decompressed. */
function backupBytes(file: string): Buffer {
  const bytes = fs.readFileSync(file)
  const second = bytes.indexOf('\n', bytes.indexOf('\n') + 1)
  return zlib.gunzipSync(bytes.subarray(second + 1))
}

describe('perpetua backup and restore of the embedded store', () => {
  const source = tempDir('backup-source')
  const target = tempDir('backup-target')
  const files = tempDir('backup-files')
  const file = path.join(files, 'perpetua.backup')
  let replay: ReplayExchange
  let receiver: HttpsReceiver
  let env: Record<string, string>
  let server: ServerProcess | undefined

  before(async () => {
    replay = await startReplay({ speed: 300, replayStart: Date.UTC(2025, 5, 17, 6, 0, 0) })
    receiver = await startHttpsReceiver()
    env = {
      APP_JWT_SECRET: crypto.randomBytes(32).toString('base64'),
      UPSTREAM_URL: replay.url,
      UPSTREAM_WS_URL: replay.wsUrl,
      WORKERS: '1',
      RATE_LIMIT_WEIGHT_PER_MINUTE: '100000',
      WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true',
      WEBHOOK_CA_FILE: testCertificates().caFile,
      METRICS_ADDR: 'off',
    }
  })
  after(async () => {
    await killChildren()
    await replay?.close()
    await receiver?.close()
    for (const dir of [source, target, files]) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('copies a running server consistently; a server on the restored DATA_DIR has every record and resumes the run', async () => {
    // No MASTER_KEY: the source keeps its generated key in DATA_DIR/master.key, the case an operator must carry over.
    server = await startServe({ ...env, DATA_DIR: source })
    const issued = await runCli(['tokens', 'issue', '--email', 'owner@example.test'], { ...env, DATA_DIR: source })
    assert.equal(issued.code, 0, issued.stderr)
    const token = (parseSingleJsonLine(issued.stdout) as { access_token: string }).access_token
    const before = api(server.url, token)

    const apiKey = await ok(before, 'POST', '/v1/api-keys', { name: 'kept', scopes: ['strategies:read', 'backtests:read'] })
    const exchangeKey = await ok(before, 'POST', '/v1/exchange-keys', { api_key: 'backupkey0000000001', api_secret: EXCHANGE_SECRET, label: 'backup' })
    const webhook = await ok(before, 'POST', '/v1/webhooks', { url: receiver.url, events: ['backtest.job_done'] })
    const template = await ok(before, 'POST', '/v1/templates', { name: 'kept-module', source: SMA })
    await ok(before, 'PUT', `/v1/templates/${template.id}`, { source: SMA.replace('default: 10', 'default: 12') })
    const strategy = await ok(before, 'POST', '/v1/strategies', { name: 'fast', template_id: 'sma_cross', params: FAST_PARAMS, symbols: ['BTCUSDT'], timeframe: '1m', capital: '1000', leverage: 1 })
    await ok(before, 'POST', `/v1/strategies/${strategy.id}/deploy`, { dry_run: true })
    const done = await ok(before, 'POST', '/v1/backtest/jobs', ONE_MINUTE_RANGE_JOB)
    await jobDone(before, done.id)
    const lastBar = async (a: Api) => (await ok(a, 'GET', `/v1/strategies/${strategy.id}`)).last_bar_at as string | null
    await poll('the dry run to act on a bar', 60_000, async () => ((await lastBar(before)) ? true : undefined))

    // The backup is taken while more jobs are queued, running or completing and the dry run goes on acting on bars.
    const inFlight = []
    for (const fast of [4, 5, 6]) inFlight.push(await ok(before, 'POST', '/v1/backtest/jobs', { ...ONE_MINUTE_RANGE_JOB, params: { fast, slow: 20 } }))
    const backup = await runCli(['backup', file, '--json'], { ...env, DATA_DIR: source })
    assert.equal(backup.code, 0, backup.stderr)
    const result = parseSingleJsonLine(backup.stdout) as { file: string; manifest: { schema_version: string; master_key_id: string } }
    assert.equal(result.file, file)
    assert.match(backup.stderr, /snapshot taken: .* MB, schema \d{4}_\w+/)
    assert.match(backup.stderr, /wrote /)
    assert.equal(fs.statSync(file).mode & 0o777, 0o600)
    assert.equal(Number.parseInt(fs.readFileSync(path.join(source, 'server.lock'), 'utf8'), 10), server.child.pid, 'the server kept DATA_DIR')
    const refused = await runCli(['backup', file], { ...env, DATA_DIR: source })
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /exists; give a new file name/)

    // What the restored server must show: read after the backup, so it holds at least as much.
    for (const job of inFlight) await jobDone(before, job.id)
    const expected = {
      apiKeys: (await ok(before, 'GET', '/v1/api-keys')).data,
      exchangeKeys: await ok(before, 'GET', '/v1/exchange-keys'),
      webhook: subscription(await ok(before, 'GET', `/v1/webhooks/${webhook.id}`)),
      template: await ok(before, 'GET', `/v1/templates/${template.id}`),
      job: await jobDone(before, done.id),
    }
    const barAtBackup = await lastBar(before)
    server.child.kill('SIGTERM')
    await server.exited(60_000)
    server = undefined
    const deliveredBefore = receiver.received.length

    // With no server, backup opens the stopped DATA_DIR itself, under its lock, and leaves it as it was.
    const stopped = await runCli(['backup', path.join(files, 'stopped.backup'), '--json'], { ...env, DATA_DIR: source })
    assert.equal(stopped.code, 0, stopped.stderr)
    assert.match(stopped.stderr, /no server holds .*: opening its database here/)
    assert.equal((parseSingleJsonLine(stopped.stdout) as typeof result).manifest.schema_version, result.manifest.schema_version)
    assert.equal(fs.existsSync(path.join(source, 'server.lock')), false, 'the lock is released')

    // Secrets at rest stay sealed in the file (its payload decompressed before the search).
    const payload = backupBytes(file)
    assert.ok(payload.includes(Buffer.from(webhook.id)), 'the search reads the database: the webhook id is there')
    assert.equal(payload.includes(Buffer.from(EXCHANGE_SECRET)), false, 'the exchange secret is not in the backup in clear')
    assert.equal(payload.includes(Buffer.from(webhook.secret)), false, 'the webhook secret is not in the backup in clear')
    assert.equal(payload.includes(fs.readFileSync(path.join(source, 'master.key'))), false, 'the master key is not in the backup')

    // Restore needs the master key that sealed the secrets: refused without it, done with the old master.key copied in.
    const noKey = await runCli(['restore', file], { ...env, DATA_DIR: target })
    assert.equal(noKey.code, 1)
    assert.match(noKey.stderr, /master key/)
    fs.copyFileSync(path.join(source, 'master.key'), path.join(target, 'master.key'))
    const restored = await runCli(['restore', file, '--json'], { ...env, DATA_DIR: target })
    assert.equal(restored.code, 0, restored.stderr)
    assert.equal((parseSingleJsonLine(restored.stdout) as { data_dir: string }).data_dir, target)
    assert.match(restored.stderr, /unpacking .* MB into/)

    server = await startServe({ ...env, DATA_DIR: target })
    const again = await runCli(['tokens', 'issue', '--email', 'owner@example.test'], { ...env, DATA_DIR: target })
    const after = api(server.url, (parseSingleJsonLine(again.stdout) as { access_token: string }).access_token)
    assert.deepEqual((await ok(after, 'GET', '/v1/api-keys')).data, expected.apiKeys)
    assert.ok(expected.apiKeys.some((k: { id: string }) => k.id === apiKey.id))
    assert.deepEqual(await ok(after, 'GET', '/v1/exchange-keys'), expected.exchangeKeys)
    assert.deepEqual(subscription(await ok(after, 'GET', `/v1/webhooks/${webhook.id}`)), expected.webhook)
    assert.deepEqual(await ok(after, 'GET', `/v1/templates/${template.id}`), expected.template)
    assert.deepEqual(await jobDone(after, done.id), expected.job)
    // The jobs in flight at the backup were copied queued, running or done: the restored server finishes each.
    for (const job of inFlight) assert.ok((await jobDone(after, job.id)).result.metrics, 'a result')
    // A job on the restored server is delivered, signed with the webhook secret opened with the carried master key.
    const fresh = await ok(after, 'POST', '/v1/backtest/jobs', { ...ONE_MINUTE_RANGE_JOB, params: { fast: 7, slow: 20 } })
    await jobDone(after, fresh.id)
    const delivery = await poll('the delivery of the new job', 60_000, () => receiver.received.slice(deliveredBefore).find((r) => r.body.includes(fresh.id)))
    assert.ok(verifyStandardWebhook(webhook.secret, delivery.headers, delivery.body), 'signed with the secret shown at create')
    // The restored key signs: its secret's hash came across.
    const signedKeyCheck = await runCli(['strategies', 'list', '--json'], { ...env, HOME: files, PERPETUA_URL: server.url, PERPETUA_API_KEY: apiKey.id, PERPETUA_API_SECRET: apiKey.secret })
    assert.equal(signedKeyCheck.code, 0, signedKeyCheck.stderr)
    const resumedFrom = await lastBar(after)
    assert.ok(resumedFrom, 'the run kept its last bar')
    await poll('the restored run to act on a new bar', 60_000, async () => {
      const bar = await lastBar(after)
      return bar && barAtBackup && bar > barAtBackup ? true : undefined
    })
  })

  it('refuses to restore into a non-empty DATA_DIR, naming it', async () => {
    const result = await runCli(['restore', file], { ...env, DATA_DIR: source })
    assert.equal(result.code, 1)
    assert.match(result.stderr, new RegExp(`DATA_DIR ${source.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not empty`))
    assert.equal(result.stdout, '')
  })

  it('refuses a backup whose schema is newer than this code knows', async () => {
    const bytes = fs.readFileSync(file)
    const first = bytes.indexOf('\n')
    const second = bytes.indexOf('\n', first + 1)
    const manifest = JSON.parse(bytes.subarray(first + 1, second).toString('utf8'))
    manifest.migrations.push('9999_from_the_future')
    manifest.schema_version = '9999_from_the_future'
    const newer = path.join(files, 'newer.backup')
    fs.writeFileSync(newer, Buffer.concat([bytes.subarray(0, first + 1), Buffer.from(`${JSON.stringify(manifest)}\n`), bytes.subarray(second + 1)]))
    const empty = tempDir('backup-newer')
    try {
      const result = await runCli(['restore', newer, '--json'], { ...env, DATA_DIR: empty })
      assert.equal(result.code, 1)
      assert.match(result.stderr, /schema \(9999_from_the_future\) is newer than this version of perpetua knows/)
      assert.deepEqual(fs.readdirSync(empty), [], 'nothing written')
    } finally {
      fs.rmSync(empty, { recursive: true, force: true })
    }
  })
})
