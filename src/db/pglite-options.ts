import v8 from 'node:v8'
import { PGlite, type PGliteOptions } from '@electric-sql/pglite'

/**
 * Opens (creating it when empty) the embedded database in `dataDir` as every embedded role runs it;
 * `loadDataDir`, a tar of a data directory (a backup), fills an empty `dataDir` instead of initdb.
 */
export function openPglite(dataDir: string, loadDataDir?: Blob): Promise<PGlite> {
  // Baseline compiler only: V8 otherwise also compiles PGlite's 9 MB of WASM with TurboFan as it gets
  // hot. Measured on a warm data dir: open 0.7 s → 0.3 s, RSS 170 → 129 MB, and 6,000 small queries
  // took the same 1.6 s either way (optimised code does not pay back its compile time at our query
  // sizes). The flag is process-wide; the only other WASM in the process is undici's HTTP parser.
  v8.setFlagsFromString('--liftoff-only')
  return PGlite.create(dataDir, loadDataDir ? { ...OPTIONS, loadDataDir } : OPTIONS)
}

const OPTIONS: PGliteOptions = {
  // relaxedDurability: PGlite still syncs after each query but does not hold the next one for it;
  // measured 395 µs → 109 µs per parameterised query. Production deployments use a PostgreSQL server.
  relaxedDurability: true,
  // initdb writes shared_buffers = 128MB, and PGlite's WASM heap keeps all of it resident from the
  // start: RSS 246 MB at 128MB, 129 MB at 16MB (6,000 small reads and upserts: 2.0–2.5 s against
  // 2.1 s). An embedded database is small and the files it reads stay in the OS page cache.
  startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'],
}
