import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import { after, before, describe, it } from 'node:test'
import { tempDir } from '../support/database.js'
import { runCli } from './cli-process.js'

// A port someone else holds: serve and replay-exchange say which one and how to choose another, in
// one line without a stack trace, and exit 1.

describe('a taken port at start', () => {
  const dataDir = tempDir('cli-port')
  let holder: net.Server
  let port: number
  before(async () => {
    holder = net.createServer()
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
    port = (holder.address() as net.AddressInfo).port
  })
  after(async () => {
    await new Promise((resolve) => holder.close(resolve))
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('serve names the port and PORT / --port', async () => {
    const result = await runCli(['serve'], { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' })
    assert.equal(result.code, 1, result.stderr)
    assert.match(result.stderr, new RegExp(`^perpetua: serve cannot listen: port ${port} on 127\\.0\\.0\\.1 is already in use by another process; set PORT \\(PORT=8081 perpetua serve, or PORT=0 for any free port\\) or pass --port$`, 'm'))
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'a stack trace')
  })

  it('replay-exchange names the port and --port', async () => {
    const result = await runCli(['replay-exchange', '--port', String(port)], {})
    assert.equal(result.code, 1, result.stderr)
    assert.equal(result.stderr, `perpetua: replay-exchange cannot listen: port ${port} on 127.0.0.1 is already in use by another process; choose another with --port (0: any free port)\n`)
  })
})
