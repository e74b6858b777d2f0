import fs from 'node:fs'
import path from 'node:path'
import { initDatabase } from './pglite-host.js'
import { markTemplate, TEMPLATE_DIR } from './pglite-template.js'

/** `node dist/db/build-pglite-template.js` (the last step of npm run build): makes the template a first start copies. */
const partial = `${TEMPLATE_DIR}.partial`
fs.rmSync(partial, { recursive: true, force: true })
await initDatabase(path.join(partial, 'pg'))
markTemplate(partial)
fs.rmSync(TEMPLATE_DIR, { recursive: true, force: true })
fs.renameSync(partial, TEMPLATE_DIR)
