import { Worker } from 'node:worker_threads'

/**
 * Watches a server of this process from a thread of its own, whose event loop a stall of the server's
 * does not stop: it asks `/healthz` every `everyMs` (each request timed from when it was due, so a
 * stalled server cannot hide its stall by delaying the asking) and samples the process's RSS as often.
 */
export interface ServerWatch {
  /** Stops watching: the slowest /healthz answer (ms) and the highest RSS (bytes) seen. */
  stop(): Promise<{ healthzMaxMs: number; healthzCount: number; peakRss: number }>
}

const WATCHER = `
const { parentPort, workerData } = require('node:worker_threads')
const http = require('node:http')
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
let going = true
let max = 0
let count = 0
let peak = process.memoryUsage().rss
parentPort.on('message', () => { going = false })
const sample = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, workerData.everyMs)
const ask = () => new Promise((resolve, reject) => {
  http.get(workerData.url, { agent }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)) }).on('error', reject)
})
;(async () => {
  let due = performance.now()
  while (going) {
    const status = await ask()
    if (status !== 200) throw new Error('/healthz answered ' + status)
    max = Math.max(max, performance.now() - due)
    count++
    due = Math.max(due + workerData.everyMs, performance.now())
    await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())))
  }
  clearInterval(sample)
  agent.destroy()
  parentPort.postMessage({ healthzMaxMs: max, healthzCount: count, peakRss: peak })
})().catch((error) => { throw error })
`

export function watchServer(address: string, everyMs = 10): ServerWatch {
  const worker = new Worker(WATCHER, { eval: true, workerData: { url: `${address}/healthz`, everyMs } })
  const result = new Promise<{ healthzMaxMs: number; healthzCount: number; peakRss: number }>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  return {
    async stop() {
      worker.postMessage('stop')
      const measured = await result
      await worker.terminate()
      return measured
    },
  }
}
