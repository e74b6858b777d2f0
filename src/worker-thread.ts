import { Worker } from 'node:worker_threads'

/**
 * Starts a worker thread from a sibling module given by its `.js` URL. Under tsx (tests, benches) the
 * source is `.ts` and Node 20 does not pass the loader hooks on to workers, so tsx is loaded explicitly.
 */
export function startWorker(jsUrl: URL, workerData: unknown): Worker {
  const fromSource = import.meta.url.endsWith('.ts')
  if (!fromSource) return new Worker(jsUrl, { workerData })
  const tsUrl = new URL(jsUrl.href.replace(/\.js$/, '.ts'))
  const api = import.meta.resolve('tsx/esm/api')
  const source = `const { register } = await import(${JSON.stringify(api)}); register(); await import(${JSON.stringify(tsUrl.href)})`
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`), { workerData })
}
