import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, describe, it } from 'node:test'
import { tempDir } from '../support/database.js'
import { killChildren, parseSingleJsonLine, runCli, type ServerProcess, startServe } from './cli-process.js'

const KLINES = `/v1/market/klines?symbol=BTCUSDT&interval=1h&startTime=${Date.UTC(2024, 0, 1)}&limit=2`

function assertRefused(result: { code: number | null; stdout: string; stderr: string }, message: RegExp): void {
  assert.equal(result.code, 2, 'exit status of a usage error')
  assert.equal(result.stdout, '', 'nothing on stdout')
  assert.match(result.stderr, message)
}

describe('perpetua users set-plan and keys create --plan on an embedded DATA_DIR', () => {
  const dataDir = tempDir('plans')
  const env = { DATA_DIR: dataDir }
  let server: ServerProcess | undefined

  after(async () => {
    await killChildren()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it('sets a plan without a server, creating the user, and changes it in place', async () => {
    const first = await runCli(['users', 'set-plan', '--email', 'Ann@Example.test', '--plan', 'standard', '--until', '2099-12-31'], env)
    assert.equal(first.code, 0, first.stderr)
    const created = parseSingleJsonLine(first.stdout) as Record<string, unknown>
    assert.ok(Number.isInteger(created.id))
    assert.deepEqual(
      { ...created, id: 0 },
      { id: 0, email: 'ann@example.test', plan: 'standard', plan_expires_at: '2100-01-01T00:00:00.000Z', active: true, created: true },
    )
    const second = await runCli(['users', 'set-plan', '--email', 'ann@example.test', '--plan', 'pro'], env)
    assert.equal(second.code, 0, second.stderr)
    assert.deepEqual(parseSingleJsonLine(second.stdout), { id: created.id, email: 'ann@example.test', plan: 'pro', plan_expires_at: null, active: true, created: false })
  })

  it('refuses bad arguments, printing nothing on stdout', async () => {
    const cases: [string[], RegExp][] = [
      [['--email', 'ann@example.test', '--plan', 'gold'], /--plan must be one of free, standard, pro \(got "gold"\)/],
      [['--email', 'ann@example.test'], /required option '--plan <plan>' not specified/],
      [['--email', 'ann@example.test', '--plan', 'standard', '--until', '2001-01-01'], /--until 2001-01-01 is already past/],
      [['--email', 'ann@example.test', '--plan', 'standard', '--until', 'soon'], /--until must be an ISO 8601/],
      [['--email', 'ann@example.test', '--plan', 'free', '--until', '2099-01-01'], /free plan never expires/],
      [['--email', 'not-an-email', '--plan', 'pro'], /--email must be an email address/],
    ]
    for (const [args, message] of cases) assertRefused(await runCli(['users', 'set-plan', ...args], env), message)
  })

  it('goes through a running server: keys create --plan opens the klines, set-plan free closes them', async () => {
    server = await startServe(env)
    const created = await runCli(['keys', 'create', '--email', 'bob@example.test', '--scopes', 'market:read', '--plan', 'standard', '--until', '2099-06-30T12:00:00Z'], env)
    assert.equal(created.code, 0, created.stderr)
    const key = parseSingleJsonLine(created.stdout) as Record<string, unknown>
    assert.deepEqual(Object.keys(key).sort(), ['api_key', 'api_secret', 'plan', 'plan_expires_at', 'scopes'])
    assert.equal(key.plan, 'standard')
    assert.equal(key.plan_expires_at, '2099-06-30T12:00:00.000Z')
    const klines = () => fetch(`${server!.url}${KLINES}`, { headers: { 'x-service-api-key': String(key.api_key) } })

    const open = await klines()
    assert.equal(open.status, 200, await open.clone().text())
    assert.equal(((await open.json()) as unknown[]).length, 2)

    const ended = await runCli(['users', 'set-plan', '--email', 'bob@example.test', '--plan', 'free'], env)
    assert.equal(ended.code, 0, ended.stderr)
    assert.equal((parseSingleJsonLine(ended.stdout) as { active: boolean }).active, false)
    const closed = await klines()
    assert.equal(closed.status, 403)
    assert.equal(((await closed.json()) as { error: { code: string } }).error.code, 'PLAN_REQUIRED')

    assertRefused(await runCli(['users', 'set-plan', '--email', 'bob@example.test', '--plan', 'platinum'], env), /--plan must be one of/)
    assertRefused(await runCli(['keys', 'create', '--email', 'bob@example.test', '--scopes', 'market:read', '--until', '2099-01-01'], env), /--until needs --plan/)
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200, 'the server keeps serving')
  })
})
