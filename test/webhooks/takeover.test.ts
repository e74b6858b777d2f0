import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { after, describe, it } from 'node:test'
import { recordEvent } from '../../src/events/outbox.js'
import { killChildren, startCli } from '../cli/cli-process.js'
import { startTestApp } from '../support/app.js'
import { tempDir } from '../support/database.js'
import { startHttpsReceiver, testCertificates } from '../support/https-receiver.js'
import { poll } from '../support/poll.js'

const EVENTS = 400
/** Each receipt takes this long to answer, so 400 deliveries keep a node busy for ~10 s. */
const ANSWER_MS = 100

describe('webhook deliveries of a node killed mid-delivery', () => {
  after(killChildren)

  it('are taken over by another node within 30 s, with few duplicates', { skip: !process.env.TEST_DATABASE_URL }, async (context) => {
    const masterKey = crypto.randomBytes(32).toString('base64')
    const shared = { WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: testCertificates().caFile, MASTER_KEY: masterKey }
    const receiver = await startHttpsReceiver({ answer: () => ({ status: 204, delayMs: ANSWER_MS }) })
    const t = await startTestApp('postgres', { ...shared, RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000' }, { queue: 'queue' })
    const startWorker = async () => {
      const worker = startCli(['worker'], { ...shared, DATABASE_URL: t.database.url!, DATA_DIR: tempDir('worker'), WORKERS: '1', LOG_LEVEL: 'info' })
      await poll('a worker to start', 60_000, () => (worker.output().stdout.includes('perpetua worker is running') ? true : undefined))
      return worker
    }
    try {
      const doomed = await startWorker()
      const key = await t.createKey(['webhooks:read', 'webhooks:write'])
      const hook = await t.signed(key, 'POST', '/v1/webhooks', { url: `${receiver.url}/takeover`, events: ['*'] })
      assert.equal(hook.statusCode, 200, hook.body)
      const userId = (await t.database.handle.db.selectFrom('api_keys').select('user_id').where('id', '=', key.api_key).executeTakeFirstOrThrow()).user_id
      await t.database.handle.db.transaction().execute(async (trx) => {
        for (let i = 0; i < EVENTS; i++) await recordEvent(trx, { userId, type: 'backtest.job_done', data: { job_id: `bt_${i}` }, at: new Date() })
      })
      await receiver.waitFor(10, 30_000)
      // The survivor starts after the doomed node took every delivery, so all it sends is taken over.
      const survivor = await startWorker()
      const before = receiver.received.length
      assert.ok(before < EVENTS - 50, `the doomed node is still mid-delivery (${before} received)`)
      doomed.child.kill('SIGKILL')
      const killedAt = Date.now()
      const resumedAt = await poll('the first delivery after the kill', 60_000, () => receiver.received.find((r) => r.at > killedAt + ANSWER_MS)?.at)
      const deliveredAt = await poll('every delivery to be recorded as delivered', 60_000, async () => {
        const row = await t.database.handle.db
          .selectFrom('deliveries')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('webhook_id', '=', hook.json().id)
          .where('state', '=', 'delivered')
          .executeTakeFirstOrThrow()
        return Number(row.n) === EVENTS ? Date.now() : undefined
      })
      const ids = receiver.received.map((r) => String(r.headers['webhook-id']))
      const unique = new Set(ids)
      const figures = { events: EVENTS, receivedBeforeKill: before, takeoverMs: resumedAt - killedAt, allDeliveredMs: deliveredAt - killedAt, duplicates: ids.length - unique.size }
      context.diagnostic(`node killed mid-delivery: ${JSON.stringify(figures)}`)
      assert.equal(unique.size, EVENTS, 'every event arrived')
      assert.ok(figures.takeoverMs < 30_000, `takeover took ${figures.takeoverMs} ms`)
      assert.ok(figures.duplicates <= 8, `${figures.duplicates} duplicates`)
      survivor.child.kill('SIGTERM')
      assert.equal(await new Promise((resolve) => survivor.child.once('exit', resolve)), 0, survivor.output().stderr)
    } finally {
      await t.close()
      await receiver.close()
    }
  })
})
