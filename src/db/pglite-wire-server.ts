import net from 'node:net'
import type { PGlite } from '@electric-sql/pglite'

/**
 * Serves one PGlite database over the PostgreSQL wire protocol on a unix socket.
 *
 * Why not @electric-sql/pglite-socket: it queues every protocol message separately, so one
 * parameterised query (Parse, Bind, Describe, Execute, Sync) costs five trips through the queue
 * (measured 450 µs a query against 110 µs in process), and messages of two connections interleave
 * between Parse and Sync outside transactions, so two connections can corrupt each other's statements.
 * Here a connection's messages are handed to PGlite in one call per complete sequence (up to Sync,
 * Query, Flush or a COPY message), and while a connection holds an open transaction only its
 * sequences run: PGlite is a single session.
 */
export class PgliteWireServer {
  private readonly server: net.Server
  private readonly sockets = new Set<net.Socket>()
  private readonly queue: (Batch | Task)[] = []
  private running = false
  /** The connection whose transaction is open; only its batches may run until it ends. */
  private owner: Connection | undefined

  constructor(private readonly db: PGlite) {
    this.server = net.createServer((socket) => this.accept(socket))
  }

  listen(socketPath: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(socketPath, () => {
        this.server.off('error', reject)
        resolve()
      })
    })
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
    for (const socket of this.sockets) socket.destroy()
    await closed
  }

  /**
   * Runs `work` on the database between two sequences while no connection's transaction is open (the
   * single session is then idle and consistent): how a backup sees only committed states.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => this.enqueue({ task: () => work().then(resolve, reject) }))
  }

  private accept(socket: net.Socket): void {
    socket.setNoDelay(true)
    this.sockets.add(socket)
    const connection: Connection = { socket, pending: Buffer.alloc(0), started: false, closed: false }
    socket.on('data', (chunk) => this.receive(connection, chunk))
    socket.on('error', () => socket.destroy())
    socket.on('close', () => {
      connection.closed = true
      this.sockets.delete(socket)
      void this.abandon(connection)
    })
  }

  private receive(connection: Connection, chunk: Buffer): void {
    connection.pending = connection.pending.length === 0 ? chunk : Buffer.concat([connection.pending, chunk])
    if (!connection.started) {
      if (!this.readStartup(connection)) return
    }
    const { complete, rest, terminate } = splitSequences(connection.pending)
    connection.pending = rest
    if (complete) this.enqueue({ connection, bytes: complete })
    if (terminate) connection.socket.end()
  }

  /** Handles SSLRequest (answer "N": no TLS on a unix socket) and queues the StartupMessage. */
  private readStartup(connection: Connection): boolean {
    const buffer = connection.pending
    if (buffer.length < 8) return false
    const length = buffer.readInt32BE(0)
    const code = buffer.readInt32BE(4)
    if (length === 8 && (code === SSL_REQUEST || code === GSS_REQUEST)) {
      connection.socket.write('N')
      connection.pending = buffer.subarray(8)
      return this.readStartup(connection)
    }
    if (code === CANCEL_REQUEST) {
      connection.socket.end() // cancellation is not supported by a single-session database
      return false
    }
    if (buffer.length < length) return false
    connection.started = true
    connection.pending = buffer.subarray(length)
    this.enqueue({ connection, bytes: buffer.subarray(0, length) })
    return true
  }

  private enqueue(batch: Batch | Task): void {
    this.queue.push(batch)
    if (!this.running) void this.drain()
  }

  private async drain(): Promise<void> {
    this.running = true
    try {
      for (;;) {
        const index = this.owner ? this.queue.findIndex((b) => 'connection' in b && b.connection === this.owner) : 0
        if (index < 0 || this.queue.length === 0) return
        const [batch] = this.queue.splice(index, 1)
        if (batch && 'task' in batch) {
          await batch.task()
          continue
        }
        if (!batch || batch.connection.closed) continue
        await this.execute(batch)
        this.owner = this.db.isInTransaction() ? batch.connection : undefined
      }
    } finally {
      this.running = false
    }
  }

  private async execute({ connection, bytes }: Batch): Promise<void> {
    try {
      await this.db.execProtocolRawStream(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
        // `data` is a view of PGlite's WASM memory, reused for the next chunk: copy it before the socket
        // holds on to it, or large results (rows over ~64 kB) arrive overwritten and the client stalls.
        onRawData: (data) => {
          if (!connection.closed) connection.socket.write(Buffer.from(data))
        },
      })
    } catch {
      connection.socket.destroy() // a protocol-level failure; PGlite reports SQL errors in-band
    }
  }

  /** A connection that went away mid-transaction must not leave the single session blocked. */
  private async abandon(connection: Connection): Promise<void> {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const queued = this.queue[i]
      if (queued && 'connection' in queued && queued.connection === connection) this.queue.splice(i, 1)
    }
    if (this.owner !== connection) return
    this.owner = undefined
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK').catch(() => undefined)
    if (!this.running && this.queue.length > 0) void this.drain()
  }
}

interface Connection {
  socket: net.Socket
  pending: Buffer
  started: boolean
  closed: boolean
}

interface Batch {
  connection: Connection
  bytes: Buffer
}

/** Work of the database's own thread (a snapshot), run when no transaction is open. */
interface Task {
  task: () => Promise<void>
}

const SSL_REQUEST = 80877103
const GSS_REQUEST = 80877104
const CANCEL_REQUEST = 80877102

/** Message types after which the client waits for an answer: Sync, Query, Flush, CopyDone, CopyFail. */
const SEQUENCE_ENDS = new Set(['S', 'Q', 'H', 'c', 'f'].map((c) => c.charCodeAt(0)))
const TERMINATE = 'X'.charCodeAt(0)

/** Splits buffered frontend messages into the complete sequences that can run now and the remainder. */
function splitSequences(buffer: Buffer): { complete: Buffer | undefined; rest: Buffer; terminate: boolean } {
  let offset = 0
  let end = 0
  while (offset + 5 <= buffer.length) {
    const type = buffer[offset] as number
    const length = buffer.readInt32BE(offset + 1)
    if (offset + 1 + length > buffer.length) break
    if (type === TERMINATE) {
      return { complete: end > 0 ? buffer.subarray(0, end) : undefined, rest: Buffer.alloc(0), terminate: true }
    }
    offset += 1 + length
    if (SEQUENCE_ENDS.has(type)) end = offset
  }
  return { complete: end > 0 ? buffer.subarray(0, end) : undefined, rest: buffer.subarray(end), terminate: false }
}
