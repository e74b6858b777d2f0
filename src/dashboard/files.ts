import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import zlib from 'node:zlib'

/** Where `npm run build` writes the dashboard: dist/web of the package (src/dashboard and dist/dashboard both sit two levels below the root). */
export const BUILT_DASHBOARD_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/web')

export interface DashboardFile {
  body: Buffer
  /** The gzip of `body` when that is smaller, made on first call; sent to clients that accept it. */
  gzip(): Buffer | undefined
  contentType: string
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
}

/**
 * The built dashboard, read once into memory: index.html and assets/* (about 250 kB, 75 kB gzipped).
 * Keys are paths below the dashboard's address ("index.html", "assets/app-…js"). Undefined when
 * the folder holds no index.html (running from source without `npm run build`).
 */
export function loadDashboard(dir: string): Map<string, DashboardFile> | undefined {
  if (!fs.existsSync(path.join(dir, 'index.html'))) return undefined
  const files = new Map<string, DashboardFile>()
  const walk = (folder: string) => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.isFile()) {
        const body = fs.readFileSync(full)
        files.set(path.relative(dir, full).split(path.sep).join('/'), {
          body,
          gzip: gzipOnce(body),
          contentType: TYPES[path.extname(full)] ?? 'application/octet-stream',
        })
      }
    }
  }
  walk(dir)
  return files
}

/**
 * Compressed when first asked for, not at start: gzip -9 of every file (the 0.8 MB source map
 * included, which few clients ever fetch) took ~200 ms of a warm `npm start` (issue 13).
 */
function gzipOnce(body: Buffer): () => Buffer | undefined {
  let made: { gzip: Buffer | undefined } | undefined
  return () => {
    if (!made) {
      const gzip = zlib.gzipSync(body, { level: 9 })
      made = { gzip: gzip.length < body.length ? gzip : undefined }
    }
    return made.gzip
  }
}
