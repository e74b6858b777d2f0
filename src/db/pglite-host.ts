import crypto from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import type { Worker } from 'node:worker_threads'
import { startWorker } from '../worker-thread.js'

/** A PGlite database running in a worker thread, reachable over a unix socket. */
export interface PgliteHost {
  /** Folder holding the socket file `.s.PGSQL.5432`; pass it to pg as `host`. */
  socketDir: string
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

/** Starts PGlite on `dataDir/pg` in a worker thread; resolves once it accepts connections. */
export async function startPgliteHost(dataDir: string): Promise<PgliteHost> {
  const socketDir = socketDirFor(dataDir)
  const { mkdirSync } = await import('node:fs')
  mkdirSync(socketDir, { recursive: true, mode: 0o700 })
  const socketPath = path.join(socketDir, `.s.PGSQL.${PGLITE_SOCKET_PORT}`)
  const worker = startWorker(new URL('./pglite-worker.js', import.meta.url), {
    dataDir: path.join(dataDir, 'pg'),
    socketPath,
  })
  await waitFor(worker, 'ready')
  let stopped: Promise<void> | undefined
  return {
    socketDir,
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
