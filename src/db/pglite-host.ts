import { fork } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Worker } from 'node:worker_threads'
import { startWorker } from '../worker-thread.js'
import { createDatabaseFolder } from './pglite-create.js'
import type { PgliteSnapshot } from './pglite-snapshot.js'
import { findTemplate } from './pglite-template.js'

/** A PGlite database running in a worker thread, reachable over a unix socket. */
export interface PgliteHost {
  /** Folder holding the socket file `.s.PGSQL.5432`; pass it to pg as `host`. */
  socketDir: string
  /** A consistent copy of the database, taken in its thread between transactions (a backup). */
  snapshot(): Promise<PgliteSnapshot>
  stop(): Promise<void>
}

export const PGLITE_SOCKET_PORT = 5432

/** Where the socket of an embedded database in `dataDir` lives (also how the CLI finds a running one). */
export function socketDirFor(dataDir: string): string {
  const preferred = path.join(dataDir, 'run')
  // Unix socket paths are limited to 107 bytes; fall back to a short path derived from dataDir.
  if (path.join(preferred, `.s.PGSQL.${PGLITE_SOCKET_PORT}`).length <= 100) return preferred
  const digest = crypto.createHash('sha256').update(dataDir).digest('hex').slice(0, 16)
  return path.join(os.tmpdir(), `perpetua-${digest}`)
}

/**
 * Starts PGlite on `dataDir/pg` in a worker thread, creating it first if needed (from `template`, a
 * fresh database folder, when given); resolves once it accepts connections.
 */
export async function startPgliteHost(dataDir: string, template = findTemplate()): Promise<PgliteHost> {
  const socketDir = socketDirFor(dataDir)
  fs.mkdirSync(socketDir, { recursive: true, mode: 0o700 })
  const socketPath = path.join(socketDir, `.s.PGSQL.${PGLITE_SOCKET_PORT}`)
  const pgDir = path.join(dataDir, 'pg')
  const fresh = !fs.existsSync(path.join(pgDir, 'PG_VERSION'))
  if (fresh && !template) await createDatabaseFolder(pgDir, initDatabase)
  // The database thread copies the template itself: copying its 40 MB (~970 files) took 0.4 s of
  // synchronous work (fs.promises.cp: 1.1 s) that would otherwise hold this thread on a first start.
  const worker = startWorker(WORKER, { dataDir: pgDir, socketPath, template: fresh ? template : undefined })
  await waitFor(worker, 'ready')
  let stopped: Promise<void> | undefined
  let snapshots = 0
  return {
    socketDir,
    snapshot() {
      const id = ++snapshots
      return new Promise<PgliteSnapshot>((resolve, reject) => {
        const onMessage = (message: { type?: string; id?: number; snapshot?: PgliteSnapshot; error?: string }) => {
          if (message?.type !== 'snapshot' || message.id !== id) return
          worker.off('message', onMessage)
          if (message.snapshot) resolve(message.snapshot)
          else reject(new Error(`the embedded database could not take a snapshot: ${message.error}`))
        }
        worker.on('message', onMessage)
        worker.postMessage({ type: 'snapshot', id })
      })
    },
    stop() {
      stopped ??= (async () => {
        worker.postMessage('stop')
        await waitFor(worker, 'stopped').catch(() => undefined)
        await worker.terminate()
      })()
      return stopped
    },
  }
}

const WORKER = new URL('./pglite-worker.js', import.meta.url)

/**
 * initdb into `dir`, in a process that ends. PGlite runs initdb in a second WASM instance and its heap
 * never shrinks: a server that ran initdb in its database thread held 904 MB after start against
 * 405 MB on the next start; in a thread of its own that ended, still 296 against 234 MB (freed memory
 * the allocator kept).
 */
export async function initDatabase(dir: string): Promise<void> {
  // Under tsx (tests) the source is .ts; fork passes on this process's --import tsx.
  const init = fileURLToPath(new URL(`./pglite-init${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url))
  const child = fork(init, [dir], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)))
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', resolve)
  })
  if (code !== 0) throw new Error(`creating the embedded database failed: its process exited with code ${code}: ${stderr.trim()}`)
}

function waitFor(worker: Worker, type: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type?: string }) => {
      if (message?.type !== type) return
      cleanup()
      resolve()
    }
    const onError = (error: Error) => {
      cleanup()
      reject(error)
    }
    const onExit = (code: number) => {
      cleanup()
      reject(new Error(`embedded database thread exited with code ${code}`))
    }
    const cleanup = () => {
      worker.off('message', onMessage)
      worker.off('error', onError)
      worker.off('exit', onExit)
    }
    worker.on('message', onMessage)
    worker.on('error', onError)
    worker.on('exit', onExit)
  })
}
