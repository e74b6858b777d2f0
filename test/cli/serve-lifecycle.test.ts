import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import { socketDirFor } from '../../src/db/pglite-host.js'
import { tempDir } from '../support/database.js'
import { killChildren, parseSingleJsonLine, poll, PROJECT_ROOT, runCli, type ServerProcess, startServe } from './cli-process.js'
import { completeResponse, connect, readUntil } from './raw-http.js'

const MIGRATIONS = fs
  .readdirSync(path.join(PROJECT_ROOT, 'src/db/migrations'))
  .filter((name) => name.endsWith('.sql'))
  .map((name) => name.replace(/\.sql$/, ''))
  .sort()

/** A pid that certainly belonged to a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
  const pid = Number.parseInt(child.stdout, 10)
  assert.ok(Number.isInteger(pid) && pid > 0)
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' })
  return pid
}

describe('perpetua serve: lock, migrations, graceful shutdown, restart', () => {
  const dataDir = tempDir('lifecycle')
  const env = { DATA_DIR: dataDir }
  const lockFile = path.join(dataDir, 'server.lock')
  let first: ServerProcess | undefined

  after(async () => {
    await killChildren()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('migrate on a fresh DATA_DIR prints the applied migrations as JSON; a second run applies none', async () => {
    const fresh = await runCli(['migrate'], env)
    assert.equal(fresh.code, 0, fresh.stderr)
    assert.deepEqual(parseSingleJsonLine(fresh.stdout), { applied: MIGRATIONS })
    assert.ok(MIGRATIONS.length > 0)
    const again = await runCli(['migrate'], env)
    assert.equal(again.code, 0, again.stderr)
    assert.deepEqual(parseSingleJsonLine(again.stdout), { applied: [] })
    assert.equal(fs.existsSync(lockFile), false, 'migrate releases the data-dir lock')
  })

  it('refuses a second serve on the same DATA_DIR, naming it and the holder, while the first keeps serving', async () => {
    first = await startServe(env)
    const created = await fetch(`${first.url}/strategies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    })
    assert.equal(created.status, 200, await created.clone().text())

    const second = await runCli(['serve'], { ...env, PORT: '0' })
    assert.notEqual(second.code, 0)
    assert.ok(second.stderr.includes(dataDir), second.stderr)
    assert.ok(second.stderr.includes(`pid ${first.child.pid}`), second.stderr)
    assert.doesNotMatch(second.stdout, /perpetua is serving/)

    assert.equal(Number.parseInt(fs.readFileSync(lockFile, 'utf8'), 10), first.child.pid, 'the lock still names the first server')
    const ready = await fetch(`${first.url}/readyz`)
    assert.equal(ready.status, 200, 'the first server and its database still answer')
    const listed = (await (await fetch(`${first.url}/strategies`)).json()) as { name: string }[]
    assert.deepEqual(listed.map((s) => s.name), ['x'])
  })

  it('on SIGTERM finishes the request in flight, stops accepting, exits 0 and removes its lock', async () => {
    const server = first
    assert.ok(server, 'the server of the previous test runs')
    const body = JSON.stringify({ name: 'in-flight', author: 'slow client' })
    const socket = await connect(server.port)
    try {
      socket.write(
        `POST /strategies HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
      )
      // "100 Continue" means the server has parsed the headers: the request is now in flight.
      const interim = await readUntil(socket, (text) => text.includes('\r\n\r\n'))
      assert.match(interim, /^HTTP\/1\.1 100 Continue\r\n/)
      socket.write(body.slice(0, 10))

      server.child.kill('SIGTERM')
      await poll('the server to stop accepting connections', 20_000, () =>
        connect(server.port).then(
          (probe) => void probe.destroy(),
          (error: NodeJS.ErrnoException) => (error.code === 'ECONNREFUSED' ? true : undefined),
        ),
      )
      assert.equal(server.child.exitCode, null, 'the server waits for the request in flight')

      socket.write(body.slice(10))
      const response = await readUntil(socket, completeResponse)
      assert.match(response, /^HTTP\/1\.1 200 /, response)
      assert.match(response, /\r\nconnection: close\r\n/i, 'the last response on this connection says so')
      const json = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { name: string }
      assert.equal(json.name, 'in-flight')
      // The client keeps its keep-alive connection open: the server must not wait for it to leave.
      const exit = await server.exited(30_000)
      assert.deepEqual(exit, { code: 0, signal: null }, server.stderr())
    } finally {
      socket.destroy()
    }

    assert.equal(fs.existsSync(lockFile), false, 'the lock file is removed')
    const runDir = socketDirFor(dataDir)
    assert.deepEqual(fs.readdirSync(runDir), [], 'the database and control sockets are removed')
  })

  it('starts over a lock left by a dead process, with the data written before the shutdown', async () => {
    const stalePid = deadPid()
    fs.writeFileSync(lockFile, `${stalePid}\nserve\n`)
    const server = await startServe(env)
    assert.equal(Number.parseInt(fs.readFileSync(lockFile, 'utf8'), 10), server.child.pid, 'the new server took the lock')
    const listed = (await (await fetch(`${server.url}/strategies`)).json()) as { name: string }[]
    assert.deepEqual(listed.map((s) => s.name).sort(), ['in-flight', 'x'])
  })
})

describe('perpetua with a bad configuration', () => {
  it('exits non-zero and reports every bad key at once on stderr', async () => {
    const dataDir = tempDir('badconfig')
    try {
      const result = await runCli(['serve'], { DATA_DIR: dataDir, PORT: 'abc', LOG_LEVEL: 'loud' })
      assert.notEqual(result.code, 0)
      assert.equal(result.stdout, '')
      assert.match(result.stderr, /PORT must be an integer.*"abc"/)
      assert.match(result.stderr, /LOG_LEVEL must be one of .*"loud"/)
      assert.equal(fs.existsSync(path.join(dataDir, 'server.lock')), false, 'nothing was started')
    } finally {
      await killChildren()
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

describe('perpetua serve: SHUTDOWN_GRACE_MS', () => {
  after(killChildren)

  it('ends a request still in flight once SHUTDOWN_GRACE_MS has passed, and exits 0', async () => {
    const dataDir = tempDir('grace')
    try {
      const server = await startServe({ DATA_DIR: dataDir, SHUTDOWN_GRACE_MS: '500' })
      const socket = await connect(server.port)
      try {
        socket.write(`POST /strategies HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n`)
        assert.match(await readUntil(socket, (text) => text.includes('\r\n\r\n')), /^HTTP\/1\.1 100 Continue\r\n/)
        socket.write('{"name":') // and never the rest
        const ended = readUntil(socket, () => false, 30_000).catch((error: Error) => error.message) // 'end' or a reset
        server.child.kill('SIGTERM')
        assert.deepEqual(await server.exited(30_000), { code: 0, signal: null }, server.stderr())
        assert.doesNotMatch(await ended, /HTTP\/1\.1 [2-5]\d\d /, 'the unfinished request got no answer: its connection was ended')
        assert.match(server.stdout(), /requests still in flight after SHUTDOWN_GRACE_MS/)
      } finally {
        socket.destroy()
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
