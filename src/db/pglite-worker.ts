import fs from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { createDatabaseFolder } from './pglite-create.js'
import { openPglite } from './pglite-options.js'
import { snapshotPglite } from './pglite-snapshot.js'
import { PgliteWireServer } from './pglite-wire-server.js'

/**
 * Runs PGlite in its own thread behind a PostgreSQL wire-protocol socket, so WASM query work
 * never blocks the HTTP event loop and the app talks to it with the same pg.Pool as to a server.
 */
interface WorkerInput {
  dataDir: string
  socketPath: string
  /** A template database folder to copy into `dataDir` first (a first start). */
  template: string | undefined
}

const { dataDir, socketPath, template } = workerData as WorkerInput
const port = parentPort
if (!port) throw new Error('pglite-worker must run in a worker thread')

if (template) await createDatabaseFolder(dataDir, (dir) => fs.cpSync(template, dir, { recursive: true }))
fs.mkdirSync(dataDir, { recursive: true }) // PGlite does not create missing parent folders
fs.rmSync(socketPath, { force: true }) // a socket left by a killed server; the caller holds the data-dir lock
const db = await openPglite(dataDir)
const server = new PgliteWireServer(db)
await server.listen(socketPath)
port.postMessage({ type: 'ready' })

port.on('message', (message: unknown) => {
  if (isSnapshotRequest(message)) {
    // A backup (`perpetua backup`): taken here, where the database is, between transactions.
    server.exclusive(() => snapshotPglite(db)).then(
      (snapshot) => port.postMessage({ type: 'snapshot', id: message.id, snapshot }, [snapshot.tar.buffer as ArrayBuffer]),
      (error: unknown) => port.postMessage({ type: 'snapshot', id: message.id, error: error instanceof Error ? error.message : String(error) }),
    )
    return
  }
  if (message !== 'stop') return
  void (async () => {
    await server.close()
    await db.close()
    fs.rmSync(socketPath, { force: true })
    port.postMessage({ type: 'stopped' })
  })()
})

function isSnapshotRequest(message: unknown): message is { type: 'snapshot'; id: number } {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'snapshot'
}
