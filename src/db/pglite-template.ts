import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * A fresh embedded database made once by `npm run build` (build-pglite-template.ts), which a first
 * start copies instead of running initdb: initdb is most of a first start (5–12 s on a busy 2-core
 * host, against ~0.1 s to copy its 40 MB). Absent when running from source (tests): then initdb runs.
 */
export const TEMPLATE_DIR = fileURLToPath(new URL('./pglite-template', import.meta.url))
const VERSION_FILE = 'pglite-version'

/** The installed PGlite's version: a template made by another version is not used. */
export function pgliteVersion(): string {
  const packageJson = new URL('../package.json', import.meta.resolve('@electric-sql/pglite'))
  return (JSON.parse(fs.readFileSync(packageJson, 'utf8')) as { version: string }).version
}

/** The template's database folder, when there is one made by the installed PGlite. */
export function findTemplate(dir = TEMPLATE_DIR): string | undefined {
  try {
    if (fs.readFileSync(path.join(dir, VERSION_FILE), 'utf8').trim() !== pgliteVersion()) return undefined
  } catch {
    return undefined
  }
  const pgDir = path.join(dir, 'pg')
  return fs.existsSync(path.join(pgDir, 'PG_VERSION')) ? pgDir : undefined
}

/** Writes the marker that makes `dir` (holding a fresh database in dir/pg) a template for this PGlite. */
export function markTemplate(dir: string): void {
  fs.writeFileSync(path.join(dir, VERSION_FILE), `${pgliteVersion()}\n`)
}
