import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import pg from 'pg'
import { initDatabase, PGLITE_SOCKET_PORT, startPgliteHost } from '../../src/db/pglite-host.js'
import { findTemplate, markTemplate } from '../../src/db/pglite-template.js'
import { tempDir } from '../support/database.js'

describe('startPgliteHost', () => {
  const dirs: string[] = []
  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('creates the database on a first start, keeps it on the next, and leaves no side folder', async () => {
    const dataDir = tempDir('pglite-host')
    dirs.push(dataDir)
    const first = await startPgliteHost(dataDir)
    try {
      assert.ok(fs.existsSync(path.join(dataDir, 'pg', 'PG_VERSION')))
      assert.ok(!fs.existsSync(path.join(dataDir, 'pg.partial')))
      await query(first.socketDir, 'create table kept (id int)')
      await query(first.socketDir, 'insert into kept values (7)')
    } finally {
      await first.stop()
    }
    const second = await startPgliteHost(dataDir)
    try {
      assert.deepEqual(await query(second.socketDir, 'select id from kept'), [{ id: 7 }])
      // The smaller buffer pool the worker asks for (pglite-worker.ts) is in force.
      assert.deepEqual(await query(second.socketDir, 'show shared_buffers'), [{ shared_buffers: '16MB' }])
    } finally {
      await second.stop()
    }
  })

  it('refuses a pg folder that holds files but no database, and leaves it as it was', async () => {
    const dataDir = tempDir('pglite-host')
    dirs.push(dataDir)
    fs.mkdirSync(path.join(dataDir, 'pg'))
    fs.writeFileSync(path.join(dataDir, 'pg', 'something'), 'kept')
    await assert.rejects(startPgliteHost(dataDir), /holds files but no database/)
    assert.deepEqual(fs.readdirSync(path.join(dataDir, 'pg')), ['something'])
  })

  it('copies a template made by this PGlite on a first start and leaves the template as it was', async () => {
    const templateDir = tempDir('pglite-template')
    dirs.push(templateDir)
    await initDatabase(path.join(templateDir, 'pg'))
    assert.equal(findTemplate(templateDir), undefined, 'not a template before it is marked')
    markTemplate(templateDir)
    const template = findTemplate(templateDir)
    assert.equal(template, path.join(templateDir, 'pg'))
    const before = fs.readdirSync(template!, { recursive: true }).length

    const dataDir = tempDir('pglite-host')
    dirs.push(dataDir)
    const host = await startPgliteHost(dataDir, template)
    try {
      await query(host.socketDir, 'create table only_here (id int)')
      assert.deepEqual(await query(host.socketDir, 'select count(*)::int as n from only_here'), [{ n: 0 }])
    } finally {
      await host.stop()
    }
    assert.equal(fs.readdirSync(template!, { recursive: true }).length, before)

    fs.writeFileSync(path.join(templateDir, 'pglite-version'), '0.0.1\n')
    assert.equal(findTemplate(templateDir), undefined, 'a template from another PGlite version is not used')
  })

  it('replaces a side folder left by a start that was killed while creating the database', async () => {
    const dataDir = tempDir('pglite-host')
    dirs.push(dataDir)
    fs.mkdirSync(path.join(dataDir, 'pg.partial'))
    fs.writeFileSync(path.join(dataDir, 'pg.partial', 'PG_VERSION'), 'half-written')
    const host = await startPgliteHost(dataDir)
    try {
      assert.deepEqual(await query(host.socketDir, 'select 1 as one'), [{ one: 1 }])
      assert.ok(!fs.existsSync(path.join(dataDir, 'pg.partial')))
    } finally {
      await host.stop()
    }
  })
})

async function query(socketDir: string, text: string): Promise<unknown[]> {
  const client = new pg.Client({ host: socketDir, port: PGLITE_SOCKET_PORT, user: 'postgres', database: 'postgres' })
  await client.connect()
  try {
    return (await client.query(text)).rows
  } finally {
    await client.end()
  }
}
