import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import { acquireLock, inspectLock } from '../../src/db/data-dir-lock.js'
import { tempDir } from '../support/database.js'

describe('data-dir lock', () => {
  const dirs: string[] = []
  const dir = () => {
    const d = tempDir('lock')
    dirs.push(d)
    return d
  }
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
  })

  it('refuses a second holder in the same process and frees the directory on release', () => {
    const dataDir = dir()
    const lock = acquireLock(dataDir, 'serve')
    assert.deepEqual(inspectLock(dataDir), { held: true, pid: process.pid })
    assert.throws(() => acquireLock(dataDir, 'migrate'), new RegExp(`in use by another perpetua process \\(pid ${process.pid}\\)`))
    lock.release()
    assert.deepEqual(inspectLock(dataDir), { held: false })
    assert.equal(fs.existsSync(path.join(dataDir, 'server.lock')), false)
    acquireLock(dataDir, 'serve').release()
  })

  it('takes over a lock naming its own pid that an earlier process left (a container restarted after a crash)', () => {
    // In a container the server gets the same pid on every start, so the lock a killed server left
    // names the pid of the new one.
    const dataDir = dir()
    fs.writeFileSync(path.join(dataDir, 'server.lock'), `${process.pid}\nserve\n`)
    assert.deepEqual(inspectLock(dataDir), { held: false })
    const lock = acquireLock(dataDir, 'serve')
    assert.deepEqual(inspectLock(dataDir), { held: true, pid: process.pid })
    lock.release()
  })
})
