import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, describe, it } from 'node:test'
import { tempDir } from '../support/database.js'
import { killChildren, parseSingleJsonLine, runCli } from './cli-process.js'

describe('perpetua users set-paper-balance on an embedded DATA_DIR', () => {
  const dataDir = tempDir('paper')
  const env = { DATA_DIR: dataDir }
  after(async () => {
    await killChildren()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('sets the wallet, creating the user, and sets it again in place', async () => {
    const first = await runCli(['users', 'set-paper-balance', '--email', 'Bo@Example.test', '--amount', '25000.5'], env)
    assert.equal(first.code, 0, first.stderr)
    const set = parseSingleJsonLine(first.stdout) as { email: string; user_id: number; paper_balance: string }
    assert.equal(set.email, 'bo@example.test')
    assert.equal(Number(set.paper_balance), 25000.5)
    const second = await runCli(['users', 'set-paper-balance', '--email', 'bo@example.test', '--amount', '0'], env)
    assert.equal(second.code, 0, second.stderr)
    assert.deepEqual(parseSingleJsonLine(second.stdout), { email: 'bo@example.test', user_id: set.user_id, paper_balance: '0' })
  })

  it('refuses a negative, non-decimal or missing amount, printing nothing', async () => {
    for (const amount of ['-5', 'lots', '1e6']) {
      const result = await runCli(['users', 'set-paper-balance', '--email', 'bo@example.test', `--amount=${amount}`], env)
      assert.equal(result.code, 2, result.stderr)
      assert.equal(result.stdout, '')
      assert.match(result.stderr, /--amount must be a decimal/)
    }
    const missing = await runCli(['users', 'set-paper-balance', '--email', 'bo@example.test'], env)
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /required option '--amount <decimal>' not specified/)
  })
})
