import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js'
import { acquireLock, type DataDirLock } from '../../src/db/data-dir-lock.js'
import { PGLITE_SOCKET_PORT, socketDirFor } from '../../src/db/pglite-host.js'
import { tempDir } from '../support/database.js'

/** A minimal PostgreSQL frontend over a raw socket, to control exactly which bytes arrive when. */
class RawFrontend {
  private buffer = Buffer.alloc(0)
  private waiter: (() => void) | undefined

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk])
      this.waiter?.()
    })
  }

  static async connect(socketPath: string): Promise<RawFrontend> {
    const socket = net.connect(socketPath)
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
    const frontend = new RawFrontend(socket)
    const params = Buffer.from('user\0postgres\0database\0postgres\0\0')
    const startup = Buffer.alloc(8)
    startup.writeInt32BE(8 + params.length, 0)
    startup.writeInt32BE(196608, 4) // protocol 3.0
    frontend.send(Buffer.concat([startup, params]))
    await frontend.untilReady()
    return frontend
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes)
  }

  /** Every message up to and including ReadyForQuery; returns the text values of the DataRows. */
  async untilReady(): Promise<string[][]> {
    const rows: string[][] = []
    for (;;) {
      while (this.buffer.length >= 5 && this.buffer.length >= 1 + this.buffer.readInt32BE(1)) {
        const type = String.fromCharCode(this.buffer[0]!)
        const body = this.buffer.subarray(5, 1 + this.buffer.readInt32BE(1))
        this.buffer = this.buffer.subarray(1 + this.buffer.readInt32BE(1))
        if (type === 'E') throw new Error(`server error: ${body.toString('utf8').replace(/\0/g, ' ')}`)
        if (type === 'D') rows.push(dataRow(body))
        if (type === 'Z') return rows
      }
      await new Promise<void>((resolve) => (this.waiter = resolve))
    }
  }

  close(): void {
    this.socket.destroy()
  }
}

function dataRow(body: Buffer): string[] {
  const values: string[] = []
  let offset = 2
  for (let i = 0; i < body.readInt16BE(0); i++) {
    const length = body.readInt32BE(offset)
    offset += 4
    values.push(body.subarray(offset, offset + length).toString('utf8'))
    offset += length
  }
  return values
}

function frontendMessage(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts)
  const header = Buffer.alloc(5)
  header.write(type, 0)
  header.writeInt32BE(4 + body.length, 1)
  return Buffer.concat([header, body])
}

const cstring = (text: string): Buffer => Buffer.from(`${text}\0`)
const int16 = (n: number): Buffer => Buffer.from([n >> 8, n & 0xff])
const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4)
  b.writeInt32BE(n)
  return b
}
/** Parse of the unnamed statement. */
const parseMessage = (sql: string): Buffer => frontendMessage('P', cstring(''), cstring(sql), int16(0))
/** Bind (one text parameter), Describe, Execute and Sync of the unnamed portal. */
const bindToSync = (param: string): Buffer =>
  Buffer.concat([
    frontendMessage('B', cstring(''), cstring(''), int16(0), int16(1), int32(Buffer.byteLength(param)), Buffer.from(param), int16(0)),
    frontendMessage('D', Buffer.from('P'), cstring('')),
    frontendMessage('E', cstring(''), int32(0)),
    frontendMessage('S'),
  ])

/**
 * The embedded database's wire server, seen from several real pg connections over its unix socket.
 * PGlite is one session: the server must keep connections' protocol messages apart and let only the
 * connection that holds an open transaction run until it ends.
 */
describe('PGlite wire server with several connections', () => {
  const dataDir = tempDir('wire')
  let lock: DataDirLock
  let handle: DatabaseHandle
  const clients = new Set<pg.Client>()

  async function client(): Promise<pg.Client> {
    const c = new pg.Client({ host: socketDirFor(dataDir), port: PGLITE_SOCKET_PORT, user: 'postgres', database: 'postgres' })
    c.on('error', () => undefined) // a client the test disconnects on purpose
    clients.add(c)
    await c.connect()
    return c
  }

  /** Tracks whether a promise has settled, without waiting for it. */
  function watch<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
    let settled = false
    const tracked = promise.finally(() => (settled = true))
    tracked.catch(() => undefined)
    return { promise: tracked, settled: () => settled }
  }

  /** Fails instead of hanging when the single session stays blocked. */
  function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms)
    })
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
  }

  function streamOf(c: pg.Client): net.Socket {
    return (c as unknown as { connection: { stream: net.Socket } }).connection.stream
  }

  before(async () => {
    lock = acquireLock(dataDir, 'test')
    handle = await connectDatabase({ databaseUrl: undefined, dataDir, poolMax: 1 })
    await handle.pool.query('CREATE TABLE wire_items (id integer PRIMARY KEY, label text NOT NULL)')
  })

  after(async () => {
    for (const c of clients) await c.end().catch(() => undefined)
    await handle?.close()
    lock?.release()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('returns large results whole: 40 rows of 160 kB bytea, byte for byte', async () => {
    // PGlite streams a result in chunks out of reused WASM memory; a chunk not copied before the socket
    // flushed it arrived overwritten, and the client saw 2 of 5 rows or stalled.
    await handle.pool.query('CREATE TABLE wire_blobs (id integer PRIMARY KEY, data bytea NOT NULL)')
    const blobs = Array.from({ length: 40 }, () => crypto.randomBytes(160_000))
    for (const [id, data] of blobs.entries()) await handle.pool.query('INSERT INTO wire_blobs VALUES ($1, $2)', [id, data])
    const { rows } = await within(handle.pool.query<{ id: number; data: Buffer }>('SELECT id, data FROM wire_blobs ORDER BY id'), 10_000, 'large select')
    assert.equal(rows.length, 40)
    for (const row of rows) assert.ok(row.data.equals(blobs[row.id]!), `row ${row.id} differs`)
    const after = await within(handle.pool.query('SELECT count(*)::int AS n FROM wire_blobs'), 5000, 'next query')
    assert.equal(after.rows[0].n, 40)
  })

  it('answers many concurrent parameterised queries from several connections each with its own result', async () => {
    const connections = await Promise.all([client(), client(), client(), client()])
    // Each connection runs its queries one after another (as pg does anyway); the connections and the
    // app's own pool run at the same time, so the server always holds batches of several connections.
    const perConnection = connections.map(async (c, n) => {
      for (let i = 0; i < 40; i++) {
        // Lengths up to 200 kB: a message then spans many socket chunks on its way in and out.
        const text = `${n}:${i}:`.padEnd(i % 10 === 0 ? 200_000 : 10 + i * 37, String.fromCharCode(97 + ((n + i) % 26)))
        if (i % 3 === 0) {
          // A different result shape on the same connections: rows must not reach the wrong query.
          const res = await c.query('SELECT g AS value, $2::text AS tag FROM generate_series(1, $1::int) AS g', [i + 1, `${n}/${i}`])
          assert.equal(res.rows.length, i + 1)
          assert.deepEqual(
            res.fields.map((f) => f.name),
            ['value', 'tag'],
          )
          assert.ok(res.rows.every((row, k) => row.value === k + 1 && row.tag === `${n}/${i}`))
        } else if (i % 7 === 0) {
          // An error on one connection stays on that connection, which then goes on working.
          await assert.rejects(c.query('SELECT $1::int / $2::int', [n, 0]), /division by zero/)
        } else {
          const res = await c.query('SELECT $1::int AS connection, $2::int AS seq, md5($3::text) AS digest, $3::text AS echo', [n, i, text])
          assert.equal(res.rows.length, 1)
          const row = res.rows[0] as { connection: number; seq: number; digest: string; echo: string }
          assert.deepEqual([row.connection, row.seq, row.digest], [n, i, crypto.createHash('md5').update(text).digest('hex')])
          assert.equal(row.echo, text)
        }
      }
    })
    const pool = Array.from({ length: 20 }, (_, i) =>
      handle.pool.query('SELECT $1::text || $2::text AS joined', [`pool${i}`, '!']).then((res) => assert.equal(res.rows[0].joined, `pool${i}!`)),
    )
    await within(Promise.all([...perConnection, ...pool]), 60_000, 'concurrent queries')
  })

  it('keeps a half-sent extended-protocol sequence apart from the queries of other connections', async () => {
    const a = await RawFrontend.connect(path.join(socketDirFor(dataDir), `.s.PGSQL.${PGLITE_SOCKET_PORT}`))
    try {
      const b = await client()
      // A's Parse of the unnamed statement arrives alone; its Bind … Sync come after B's whole query,
      // which parses an unnamed statement of its own in the same single session.
      a.send(parseMessage("SELECT 'A:' || $1::text AS v"))
      const fromB = await within(b.query("SELECT 'B:' || $1::text AS v", ['b']), 10_000, 'B while A is half-way through a sequence')
      assert.deepEqual(fromB.rows, [{ v: 'B:b' }])
      a.send(bindToSync('a'))
      assert.deepEqual(await within(a.untilReady(), 10_000, 'A completes its sequence'), [['A:a']])
    } finally {
      a.close()
    }
  })

  it('makes other connections wait while one holds an open transaction, then shows them the committed result', async () => {
    const [a, b] = await Promise.all([client(), client()])
    await a.query('BEGIN')
    await a.query('INSERT INTO wire_items (id, label) VALUES ($1, $2)', [100, 'committed'])
    const read = watch(b.query('SELECT label FROM wire_items WHERE id = $1', [100]))
    // Several round trips of A run while B's query has long since arrived: B must still be waiting.
    for (let i = 0; i < 5; i++) {
      assert.equal((await a.query('SELECT count(*)::int AS n FROM wire_items WHERE id = $1', [100])).rows[0].n, 1)
      assert.equal(read.settled(), false, 'B ran inside A’s open transaction')
    }
    await a.query('COMMIT')
    const result = await within(read.promise, 10_000, 'B after A committed')
    assert.deepEqual(result.rows, [{ label: 'committed' }])
  })

  it('takes a snapshot (perpetua backup) only between transactions: it waits for an open one and holds what it committed', async () => {
    const a = await client()
    await a.query('BEGIN')
    await a.query('INSERT INTO wire_items (id, label) VALUES ($1, $2)', [900, 'in the snapshot'])
    const snapshot = watch(handle.snapshot!())
    for (let i = 0; i < 5; i++) {
      await a.query('SELECT 1')
      assert.equal(snapshot.settled(), false, 'the snapshot was taken inside an open transaction')
    }
    await a.query('COMMIT')
    const { tar, migrations } = await within(snapshot.promise, 30_000, 'the snapshot after A committed')
    assert.deepEqual(migrations, [], 'this database was never migrated')
    const copy = await PGlite.create({ loadDataDir: new Blob([tar]) })
    try {
      const { rows } = await copy.query('SELECT label FROM wire_items WHERE id = 900')
      assert.deepEqual(rows, [{ label: 'in the snapshot' }])
    } finally {
      await copy.close()
    }
    // The others go on: the session is free again.
    assert.equal((await a.query('SELECT count(*)::int AS n FROM wire_items WHERE id = 900')).rows[0].n, 1)
  })

  it('never shows a waiting connection the writes of a transaction that rolls back', async () => {
    const [a, b] = await Promise.all([client(), client()])
    await a.query('BEGIN')
    await a.query('INSERT INTO wire_items (id, label) VALUES ($1, $2)', [200, 'uncommitted'])
    const read = watch(b.query('SELECT count(*)::int AS n FROM wire_items WHERE id = $1', [200]))
    for (let i = 0; i < 5; i++) {
      await a.query('SELECT 1')
      assert.equal(read.settled(), false, 'B ran inside A’s open transaction')
    }
    await a.query('ROLLBACK')
    const result = await within(read.promise, 10_000, 'B after A rolled back')
    assert.equal(result.rows[0].n, 0)
  })

  for (const how of ['ends its connection (Terminate)', 'drops its socket']) {
    it(`rolls back and unblocks the others when a client in a transaction ${how}`, async () => {
      const [a, b, c] = await Promise.all([client(), client(), client()])
      const id = how.startsWith('ends') ? 300 : 301
      await a.query('BEGIN')
      await a.query('INSERT INTO wire_items (id, label) VALUES ($1, $2)', [id, 'abandoned'])
      const read = watch(b.query('SELECT count(*)::int AS n FROM wire_items WHERE id = $1', [id]))
      await a.query('SELECT 1')
      assert.equal(read.settled(), false)

      if (how.startsWith('ends')) await a.end()
      else streamOf(a).destroy()

      const result = await within(read.promise, 10_000, 'B after A went away')
      assert.equal(result.rows[0].n, 0, 'the abandoned insert was rolled back')
      // The session is free and not inside A's transaction: C's transaction commits on its own.
      await within(c.query('BEGIN'), 10_000, 'C begins')
      await c.query('INSERT INTO wire_items (id, label) VALUES ($1, $2)', [id, 'second try'])
      await c.query('COMMIT')
      assert.deepEqual((await b.query('SELECT label FROM wire_items WHERE id = $1', [id])).rows, [{ label: 'second try' }])
      assert.equal((await handle.pool.query('SELECT count(*)::int AS n FROM wire_items WHERE id = $1', [id])).rows[0].n, 1)
    })
  }

  it('unblocks the others when a client sends BEGIN and a write and closes its socket at once', async () => {
    const [a, b] = await Promise.all([client(), client()])
    const stream = streamOf(a)
    // A simple-protocol Query message, written by hand so the socket can be dropped in the same tick.
    const sql = "BEGIN; INSERT INTO wire_items (id, label) VALUES (400, 'dropped')\0"
    const message = Buffer.alloc(5 + Buffer.byteLength(sql))
    message.write('Q', 0)
    message.writeInt32BE(4 + Buffer.byteLength(sql), 1)
    message.write(sql, 5)
    stream.end(message) // the message, then the end of the connection
    const result = await within(b.query('SELECT count(*)::int AS n FROM wire_items WHERE id = $1', [400]), 10_000, 'B after A dropped')
    assert.equal(result.rows[0].n, 0)
    await within(b.query('BEGIN'), 10_000, 'B begins')
    await b.query('COMMIT')
  })
})
