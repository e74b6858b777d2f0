import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { after, describe, it } from 'node:test'
import { poll, PROJECT_ROOT } from '../cli/cli-process.js'

describe('perpetua replay-exchange', () => {
  const children: ReturnType<typeof spawn>[] = []
  after(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
  })

  it('prints its URLs as one JSON line, serves, and stops on SIGTERM', async () => {
    const started = Date.now()
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'replay-exchange', '--port', '0', '--start', '2024-03-14T12:00:00Z', '--speed', '2'], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))

    const line = await poll(`the JSON line (stderr: ${stderr})`, 10_000, () => (stdout.includes('\n') ? stdout : undefined))
    assert.ok(Date.now() - started < 10_000, 'serving within 10 s')
    assert.equal(line.indexOf('\n'), line.length - 1, 'exactly one line')
    const { url, wsUrl } = JSON.parse(line) as { url: string; wsUrl: string }
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)
    assert.equal(wsUrl, url.replace('http', 'ws'))

    const time = (await (await fetch(`${url}/fapi/v1/time`)).json()) as { serverTime: number }
    const start = Date.parse('2024-03-14T12:00:00Z')
    assert.ok(time.serverTime >= start && time.serverTime < start + 60_000, String(time.serverTime))
    const fault = await fetch(`${url}/__replay/faults`, { method: 'POST', body: JSON.stringify({ status: 502, times: 1 }), headers: { 'content-type': 'application/json' } })
    assert.equal(fault.status, 201)
    assert.equal((await fetch(`${url}/fapi/v1/exchangeInfo`)).status, 502)

    child.kill('SIGTERM')
    assert.equal(await exited, 0)
    assert.match(stderr, /listening/)
  })

  it('rejects a bad option with a message and exit code 2 (a usage error)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'replay-exchange', '--speed', '0'], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)))
    assert.equal(code, 2)
    assert.match(stderr, /--speed .*'0' is invalid/)
  })
})
