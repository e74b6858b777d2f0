import fs from 'node:fs'
import v8 from 'node:v8'
import { parentPort, workerData } from 'node:worker_threads'
import { PGlite, type PGliteOptions } from '@electric-sql/pglite'
import { PgliteWireServer } from './pglite-wire-server.js'

/**
 * Runs PGlite in its own thread behind a PostgreSQL wire-protocol socket, so WASM query work
 * never blocks the HTTP event loop and the app talks to it with the same pg.Pool as to a server.
 * With `initOnly` it creates the database in `dataDir` (initdb) and exits: pglite-host.ts runs that
 * in a thread of its own, so initdb's memory goes when the thread ends.
 */
interface WorkerInput {
  dataDir: string
  socketPath: string
  initOnly?: boolean
}

const { dataDir, socketPath, initOnly } = workerData as WorkerInput
const port = parentPort
if (!port) throw new Error('pglite-worker must run in a worker thread')

// Baseline compiler only: V8 otherwise also compiles PGlite's 9 MB of WASM with TurboFan as it gets
// hot. Measured on a warm data dir: open 0.7 s → 0.3 s, RSS 170 → 129 MB, and 6,000 small queries
// took the same 1.6 s either way (optimised code does not pay back its compile time at our query
// sizes). The flag is process-wide; the only other WASM in the process is undici's HTTP parser.
v8.setFlagsFromString('--liftoff-only')

const OPTIONS: PGliteOptions = {
  // relaxedDurability: PGlite still syncs after each query but does not hold the next one for it;
  // measured 395 µs → 109 µs per parameterised query. Production deployments use a PostgreSQL server.
  relaxedDurability: true,
  // initdb writes shared_buffers = 128MB, and PGlite's WASM heap keeps all of it resident from the
  // start: RSS 246 MB at 128MB, 129 MB at 16MB (6,000 small reads and upserts: 2.0–2.5 s against
  // 2.1 s). An embedded database is small and the files it reads stay in the OS page cache.
  startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'],
}

fs.mkdirSync(dataDir, { recursive: true }) // PGlite does not create missing parent folders
const db = await PGlite.create(dataDir, OPTIONS)
if (initOnly) {
  await db.close()
} else {
  fs.rmSync(socketPath, { force: true }) // a socket left by a killed server; the caller holds the data-dir lock
  const server = new PgliteWireServer(db)
  await server.listen(socketPath)
  port.postMessage({ type: 'ready' })
  port.on('message', (message: unknown) => {
    if (message !== 'stop') return
    void (async () => {
      await server.close()
      await db.close()
      fs.rmSync(socketPath, { force: true })
      port.postMessage({ type: 'stopped' })
    })()
  })
}
