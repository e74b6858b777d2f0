import assert from 'node:assert/strict'
import http from 'node:http'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { seedDoneSweep, seededDay, seededEquity } from '../support/big-sweep.js'
import { backends } from '../support/database.js'
import { watchServer } from '../support/server-watch.js'
import { type KeyPair, signedHeaders } from '../support/signing.js'

/** Issue 37: a sweep of 10,000 configurations over 1,826 daily returns (5 years). */
const RUNS = 10_000
const POINTS = 1827
const PAGE = 1000
const SWEEP = 'sw_00037037'
const MB = 1024 * 1024

interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  /** The body when asked to keep it; else only its length. */
  body: string
  bytes: number
}

/** Rows whose every cell the walk over the pages checks. */
const CHECKED_ROWS = new Set([0, 1, 912, POINTS - 2])

/** The return of run `runNo` on row `t`, as the CSV writes it. */
function expected(runNo: number, t: number): string {
  const equity = seededEquity(runNo, t + 2)
  return String(equity[t + 1]! / equity[t]! - 1)
}

for (const backend of backends()) {
  describe(`GET …/returns of a 10,000 × 1,826 sweep (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    let address: string

    /** A signed GET over real HTTP; the body is read as it arrives and kept only when `keep`, else counted and dropped. */
    function get(path: string, options: { keep?: boolean; onLine?: (line: string, n: number) => void } = {}): Promise<Answer> {
      t.clock.advance(1)
      const headers = signedHeaders(key, 'GET', path, '', t.clock.now())
      return new Promise((resolve, reject) => {
        http
          .get(`${address}${path}`, { headers }, (response) => {
            let body = ''
            let bytes = 0
            let rest = ''
            let lines = 0
            response.setEncoding('utf8')
            response.on('data', (chunk: string) => {
              bytes += chunk.length
              if (options.keep) body += chunk
              if (options.onLine) {
                const parts = (rest + chunk).split('\n')
                rest = parts.pop()!
                for (const line of parts) options.onLine(line, lines++)
              }
            })
            response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body, bytes }))
            response.on('error', reject)
          })
          .on('error', reject)
      })
    }

    before(async () => {
      t = await startTestApp(backend, {}, { config: { weightPerMinute: 1_000_000_000 } })
      key = await t.createKey(['backtests:read'], `returns-${backend}@example.test`)
      const user = await t.database.handle.db.selectFrom('users').select('id').where('email', '=', `returns-${backend}@example.test`).executeTakeFirstOrThrow()
      await seedDoneSweep(t.database.handle.db, user.id, SWEEP, RUNS, POINTS)
      address = await t.app.listen({ host: '127.0.0.1', port: 0 })
    })
    after(() => t.close())

    it('refuses the whole matrix of a sweep beyond one page, saying how to read it', async () => {
      for (const path of [`/v1/backtest/sweeps/${SWEEP}/returns`, `/v1/backtest/sweeps/${SWEEP}/returns?format=csv`]) {
        const refused = await get(path, { keep: true })
        assert.equal(refused.status, 400, refused.body)
        const error = JSON.parse(refused.body).error
        assert.deepEqual([error.code, error.field], ['INVALID_PARAMETER', 'limit'])
        assert.match(error.message, /this sweep has 10000 runs; a request reads at most 1000 columns: read them in pages with \?limit=1000, each answer's Link rel="next"/)
      }
      const tooMany = await get(`/v1/backtest/sweeps/${SWEEP}/returns?limit=1001`, { keep: true })
      assert.equal(tooMany.status, 400, tooMany.body)
      assert.equal(JSON.parse(tooMany.body).error.field, 'limit')
      const both = await get(`/v1/backtest/sweeps/${SWEEP}/returns?run_ids=r1&limit=5`, { keep: true })
      assert.equal(both.status, 400, both.body)
      assert.match(JSON.parse(both.body).error.message, /run_ids names its columns; limit and cursor page through every column/)
    })

    it('reaches every column through the pages, each number that of its run', async () => {
      let path: string | undefined = `/v1/backtest/sweeps/${SWEEP}/returns?limit=${PAGE}&format=csv`
      const seen: string[] = []
      let pages = 0
      while (path) {
        let ids: string[] = []
        let rows = 0
        const answer = await get(path, {
          onLine(line, n) {
            const cells = line.split(',')
            if (n === 0) {
              assert.equal(cells[0], 'date')
              ids = cells.slice(1)
              return
            }
            rows++
            const row = n - 1
            assert.equal(cells[0], seededDay(row))
            if (!CHECKED_ROWS.has(row)) return
            cells.slice(1).forEach((cell, j) => assert.equal(cell, expected(Number(ids[j]!.slice(1)), row), `${ids[j]} row ${row}`))
          },
        })
        assert.equal(answer.status, 200)
        assert.equal(rows, POINTS - 1)
        assert.equal(ids.length, PAGE)
        seen.push(...ids)
        pages++
        const link = answer.headers.link as string | undefined
        path = link && /^<([^>]+)>; rel="next"$/.exec(link)![1]
      }
      assert.equal(pages, RUNS / PAGE)
      assert.deepEqual(seen, Array.from({ length: RUNS }, (_, i) => `r${i + 1}`))

      // A JSON page from a cursor in the middle: the same numbers, as JSON writes them.
      const first = await get(`/v1/backtest/sweeps/${SWEEP}/returns?limit=3`)
      const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.link as string)![1]!
      assert.match(next, /^\/v1\/backtest\/sweeps\/sw_00037037\/returns\?limit=3&cursor=[\w-]+$/)
      const page = await get(next, { keep: true })
      const matrix = JSON.parse(page.body)
      assert.deepEqual(matrix.run_ids, ['r4', 'r5', 'r6'])
      assert.equal(matrix.dates.length, POINTS - 1)
      assert.equal(matrix.returns[912][1], Number(expected(5, 912)))
    })

    it('weighs an answer in proportion to its size', async () => {
      const used = async (path: string) => {
        const fresh = await t.createKey(['backtests:read'], `returns-${backend}@example.test`)
        const before = key
        key = fresh
        try {
          const answer = await get(path)
          assert.equal(answer.status, 200)
          return Number(answer.headers['x-service-used-weight-1m'])
        } finally {
          key = before
        }
      }
      // 2 for the lookup, then 1 per 20,000 numbers: one column of 1,826 days, then 1,000 of them.
      assert.equal(await used(`/v1/backtest/sweeps/${SWEEP}/returns?run_ids=r7`), 3)
      assert.equal(await used(`/v1/backtest/sweeps/${SWEEP}/returns?run_ids=${Array.from({ length: 100 }, (_, i) => `r${i + 1}`).join(',')}`), 2 + 10)
      assert.equal(await used(`/v1/backtest/sweeps/${SWEEP}/returns?limit=1000`), 2 + 92)
    })

    // The issue's goal is /healthz within 100 ms during 10 calls: measured by npm run bench -- sweep-returns
    // (17–100 ms at load average 5–11 on this 2-core host). The bound here is 1 s because the host is shared
    // by several test runs (load average up to 13), whose scheduling alone delayed /healthz by up to 430 ms
    // with one call in flight; it still fails the code before issue 37 by far (one call stalled the loop 8–13 s).
    it('serves 10 pages at once in bounded memory while /healthz answers within 1 s', async (context) => {
      const pagePath = (k: number) => `/v1/backtest/sweeps/${SWEEP}/returns?limit=${PAGE}${k === 0 ? '' : `&cursor=${Buffer.from(JSON.stringify(['columns', k * PAGE + 1])).toString('base64url')}`}`
      for (const calls of [1, 10]) {
        global.gc?.()
        const baseline = process.memoryUsage().rss
        const watch = watchServer(address)
        const answers = await Promise.all(Array.from({ length: calls }, (_, k) => get(pagePath(k))))
        const watched = await watch.stop()
        for (const answer of answers) {
          assert.equal(answer.status, 200)
          assert.ok(answer.bytes > 30 * MB, `a page of ${answer.bytes} bytes`)
        }
        const growth = (watched.peakRss - baseline) / calls
        // Issue 37's done criteria: before, one call of the whole matrix grew RSS by ~800 MB and stalled the loop 4–13 s.
        assert.ok(growth < 100 * MB, `RSS grew ${Math.round(growth / MB)} MB per call in flight (${calls} calls)`)
        assert.ok(watched.healthzCount > 0)
        context.diagnostic(`${calls} calls: RSS +${Math.round(growth / MB)} MB per call, /healthz at most ${Math.round(watched.healthzMaxMs)} ms over ${watched.healthzCount} asks`)
        assert.ok(watched.healthzMaxMs < 1000, `/healthz took up to ${Math.round(watched.healthzMaxMs)} ms during ${calls} calls`)
      }
    })
  })
}
