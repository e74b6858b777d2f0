import fs from 'node:fs'
import { openPglite } from './pglite-options.js'

/**
 * `node pglite-init.js DIR`: creates the embedded database in DIR (initdb) and exits. pglite-host.ts
 * runs it as a process of its own so that none of initdb's memory stays in the server.
 */
const dataDir = process.argv[2]
if (!dataDir) throw new Error('usage: pglite-init DIR')
fs.mkdirSync(dataDir, { recursive: true }) // PGlite does not create missing parent folders
const db = await openPglite(dataDir)
await db.close()
