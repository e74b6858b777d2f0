import fs from 'node:fs'
import path from 'node:path'
import { loadConfig } from '../config.js'
import { initDatabase } from './pglite-host.js'
import { markTemplate, TEMPLATE_DIR } from './pglite-template.js'
import { openStorage } from '../storage.js'

/**
 * `node dist/db/build-pglite-template.js` (the last step of npm run build): makes the template a first
 * start copies, with every migration of this build applied, so a first start runs none (7 migrations
 * took 0.4–0.9 s of a first start on a busy 2-core host).
 */
const partial = `${TEMPLATE_DIR}.partial`
fs.rmSync(partial, { recursive: true, force: true })
await initDatabase(path.join(partial, 'pg'))
const storage = await openStorage(loadConfig({ DATA_DIR: partial, LOG_LEVEL: 'silent' }), 'build')
await storage.close()
for (const name of fs.readdirSync(partial)) if (name !== 'pg') fs.rmSync(path.join(partial, name), { recursive: true, force: true }) // the socket folder
markTemplate(partial)
fs.rmSync(TEMPLATE_DIR, { recursive: true, force: true })
fs.renameSync(partial, TEMPLATE_DIR)
