import fs from 'node:fs'

/**
 * Creates the embedded database folder `pgDir` with `fill`, which writes a whole database (a copy of
 * the build's template, or initdb) into the folder it is given: a side folder, renamed into place when
 * complete, so a start killed halfway leaves only the side folder, which the next start replaces.
 */
export async function createDatabaseFolder(pgDir: string, fill: (dir: string) => void | Promise<void>): Promise<void> {
  if (fs.existsSync(pgDir)) {
    if (fs.readdirSync(pgDir).length > 0) throw new Error(`${pgDir} holds files but no database (no PG_VERSION); move it away to create a new database`)
    fs.rmdirSync(pgDir)
  }
  const partial = `${pgDir}.partial`
  fs.rmSync(partial, { recursive: true, force: true })
  await fill(partial)
  fs.renameSync(partial, pgDir)
}
