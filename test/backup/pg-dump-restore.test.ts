import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { killChildren, parseSingleJsonLine, runCli, type ServerProcess, startServe } from '../cli/cli-process.js'
import { SMA } from '../custom-templates/modules.js'
import { SMA_CROSS_JOB } from '../support/backtest-job.js'
import { createServerDatabase, dropServerDatabase, tempDir } from '../support/database.js'
import { poll } from '../support/poll.js'

// The guide's recipe for PostgreSQL deployments (docs/operating.md, "Backups and restore"): pg_dump of a
// database with data while a node serves it, pg_restore into a new database, and a node on the copy answers
// every read as the original did, with the same MASTER_KEY and APP_JWT_SECRET (the same token works).

const run = promisify(execFile)

describe('pg_dump and pg_restore of a PostgreSQL deployment', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, () => {
  const dataDirs: string[] = []
  const databases: string[] = []
  const files = tempDir('pg-dump')
  const shared = {
    MASTER_KEY: crypto.randomBytes(32).toString('base64'),
    APP_JWT_SECRET: crypto.randomBytes(32).toString('base64'),
    WORKERS: '1',
    RATE_LIMIT_WEIGHT_PER_MINUTE: '100000',
    WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true',
    METRICS_ADDR: 'off',
  }
  const node = async (databaseUrl: string): Promise<ServerProcess> => {
    const dataDir = tempDir('pg-dump-node')
    dataDirs.push(dataDir)
    return startServe({ ...shared, DATABASE_URL: databaseUrl, DATA_DIR: dataDir })
  }

  after(async () => {
    await killChildren()
    for (const url of databases) await dropServerDatabase(url)
    for (const dir of [...dataDirs, files]) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('a dump restored into a new database serves the same answers', async () => {
    const source = await createServerDatabase()
    databases.push(source)
    let server = await node(source)
    const issued = await runCli(['tokens', 'issue', '--email', 'dump@example.test'], { ...shared, DATABASE_URL: source, DATA_DIR: dataDirs[0]! })
    assert.equal(issued.code, 0, issued.stderr)
    const token = (parseSingleJsonLine(issued.stdout) as { access_token: string }).access_token
    const call = async (url: string, method: string, target: string, body?: unknown) => {
      const res = await fetch(`${url}${target}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      const json = (await res.json()) as any
      assert.ok(res.ok, `${method} ${target}: ${res.status} ${JSON.stringify(json)}`)
      return json
    }

    const key = await call(server.url, 'POST', '/v1/api-keys', { name: 'dumped', scopes: ['strategies:read'] })
    await call(server.url, 'POST', '/v1/exchange-keys', { api_key: 'dumpkey000000000001', api_secret: `dumpsecret${crypto.randomBytes(12).toString('hex')}`, label: 'dump' })
    const webhook = await call(server.url, 'POST', '/v1/webhooks', { url: 'https://127.0.0.1:9/hook', events: ['strategy.deployed'] })
    const template = await call(server.url, 'POST', '/v1/templates', { name: 'dumped-module', source: SMA })
    const strategy = await call(server.url, 'POST', '/v1/strategies', { name: 'dumped', template_id: 'sma_cross', params: { fast: 10, slow: 30 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000', leverage: 1 })
    const job = await call(server.url, 'POST', '/v1/backtest/jobs', SMA_CROSS_JOB)
    const reads = ['/v1/api-keys', '/v1/exchange-keys', `/v1/webhooks/${webhook.id}`, `/v1/templates/${template.id}`, `/v1/strategies/${strategy.id}`, '/v1/strategies', `/v1/backtest/jobs/${job.id}`]
    // Polled as a client must (a job answers 429 within 5 s of the last poll); its last answer is the one to compare.
    const done = await poll('the job to complete', 120_000, async () => {
      const res = await fetch(`${server.url}/v1/backtest/jobs/${job.id}`, { headers: { authorization: `Bearer ${token}` } })
      const body = (await res.json()) as { status: string }
      return res.status === 200 && body.status === 'done' ? body : undefined
    }, 5_000)

    // The recipe, as the guide writes it, while the node serves.
    const dump = path.join(files, 'perpetua.dump')
    await run('pg_dump', ['--format=custom', '--no-owner', `--file=${dump}`, source])
    const expected = new Map<string, unknown>([[`/v1/backtest/jobs/${job.id}`, done]])
    for (const target of reads) if (!expected.has(target)) expected.set(target, await call(server.url, 'GET', target))
    server.child.kill('SIGTERM')
    await server.exited(60_000)

    const restored = await createServerDatabase()
    databases.push(restored)
    await run('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${restored}`, dump])
    server = await node(restored)
    for (const target of reads) {
      // The job's last poll came over with the data: within 5 s of it the copy answers 429, as the source would.
      const answer = target === `/v1/backtest/jobs/${job.id}`
        ? await poll('the copy to answer the job', 30_000, async () => {
            const res = await fetch(`${server.url}${target}`, { headers: { authorization: `Bearer ${token}` } })
            return res.status === 429 ? undefined : ((await res.json()) as unknown)
          }, 1_000)
        : await call(server.url, 'GET', target)
      // A webhook's delivery counters may move after the dump (its endpoint refuses); its subscription may not.
      if (target.startsWith('/v1/webhooks/')) for (const field of ['consecutive_failures', 'last_delivery_at']) delete answer[field], delete (expected.get(target) as any)[field]
      assert.deepEqual(answer, expected.get(target), target)
    }
    assert.ok((expected.get('/v1/api-keys') as { data: { id: string }[] }).data.some((k) => k.id === key.id))
    // The key's sealed secret opens on the copy (same MASTER_KEY): a signed request passes.
    const signed = await runCli(['strategies', 'list', '--json'], { HOME: files, PERPETUA_URL: server.url, PERPETUA_API_KEY: key.id, PERPETUA_API_SECRET: key.secret })
    assert.equal(signed.code, 0, signed.stderr)
    assert.equal((JSON.parse(signed.stdout) as { data: { id: string }[] }).data[0]?.id, strategy.id)
  })
})
