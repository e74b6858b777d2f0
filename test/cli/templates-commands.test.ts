import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { PerpetuaClient } from '../../src/client/index.js'
import { type ClientServer, startClientServer } from '../client/server.js'
import { BROKEN, SMA, SMA_TS } from '../custom-templates/modules.js'
import { tempDir } from '../support/database.js'
import ts from 'typescript'
import { killChildren, parseSingleJsonLine, runCli } from './cli-process.js'

// `perpetua templates …` as a user runs it: child processes talking HTTP to the app on a loopback port.

describe('perpetua templates push|show', () => {
  const dir = tempDir('cli-templates')
  let server: ClientServer
  let env: Record<string, string>
  let client: PerpetuaClient
  const file = (name: string, text: string) => {
    const at = path.join(dir, name)
    fs.writeFileSync(at, text)
    return at
  }

  before(async () => {
    // A wall clock: the child processes sign with the real time.
    server = await startClientServer('pglite', {}, { wallClock: true })
    const key = await server.t.createKey(['strategies:read', 'strategies:write'])
    env = { HOME: dir, PERPETUA_URL: server.baseUrl, PERPETUA_API_KEY: key.api_key, PERPETUA_API_SECRET: key.api_secret }
    client = server.client(key, { now: Date.now })
  })
  after(async () => {
    await killChildren()
    await server?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('push uploads a new template named after the file, then a new version with --id, language from the extension', async () => {
    const created = await runCli(['templates', 'push', file('sma-port.js', SMA)], env)
    assert.equal(created.code, 0, created.stderr)
    const id = /^(tpl-[0-9a-f]{16}) version 1\n$/.exec(created.stdout)?.[1]
    assert.ok(id, created.stdout)
    const first = await client.templates.get(id)
    assert.ok(first.custom)
    assert.deepEqual([first.name, first.language, first.source], ['sma-port', 'javascript', SMA])

    const pushed = await runCli(['templates', 'push', file('typed.ts', SMA_TS), '--id', id, '--name', 'typed port', '--description', 'now in TypeScript', '--json'], env)
    assert.equal(pushed.code, 0, pushed.stderr)
    const answer = parseSingleJsonLine(pushed.stdout) as { id: string; version: number }
    const second = await client.templates.get(id)
    assert.ok(second.custom)
    const { source: _, versions: __, ...info } = second
    assert.deepEqual(answer, info, "--json prints the API's answer")
    assert.deepEqual([second.version, second.language, second.name, second.description, second.source], [2, 'typescript', 'typed port', 'now in TypeScript', SMA_TS])

    const listed = await runCli(['templates'], env)
    assert.equal(listed.code, 0, listed.stderr)
    assert.match(listed.stdout, /│ sma_cross +│ built-in +│/)
    assert.match(listed.stdout, new RegExp(`│ ${id} +│ 2 +│ fast=5 slow=20 +│ 1 +│ 200 +│ typed port: now in TypeScript`))
    const json = await runCli(['templates', '--json'], env)
    assert.deepEqual((parseSingleJsonLine(json.stdout) as { data: unknown[] }).data, await client.templates.list())
  })

  it('show prints the template, its params and versions; --source the module text exactly; --json the answer', async () => {
    const created = await client.templates.create({ name: 'shown', source: SMA })
    await client.templates.update(created.id, { source: SMA_TS, language: 'typescript' })
    const shown = await runCli(['templates', 'show', created.id], env)
    assert.equal(shown.code, 0, shown.stderr)
    for (const row of [/│ name +│ shown +│/, /│ version +│ 2 +│/, /│ language +│ typescript +│/, /│ warmup \(defaults\) +│ 20 +│/, /│ slow +│ integer +│ 20 +│ 3 +│ 200 +│/, /│ 1 +│ [0-9a-f]{64} +│/]) {
      assert.match(shown.stdout, row)
    }
    const source = await runCli(['templates', 'show', created.id, '--source'], env)
    assert.equal(source.stdout, SMA_TS)
    const older = await runCli(['templates', 'show', created.id, '--source', '--version', '1'], env)
    assert.equal(older.stdout, SMA)
    const json = await runCli(['templates', 'show', 'sma_cross', '--json'], env)
    assert.deepEqual(parseSingleJsonLine(json.stdout), await client.templates.get('sma_cross'))
    const builtIn = await runCli(['templates', 'show', 'sma_cross'], env)
    assert.match(builtIn.stdout, /│ fast +│ integer +│ 10 +│ 2 +│ 999 +│/)
  })

  it("exits 1 with the API's message for a refused module or an unknown id, 2 for a usage error", async () => {
    const refused = await runCli(['templates', 'push', file('broken.js', BROKEN)], env)
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /^perpetua: .*\(INVALID_PARAMETER, HTTP 400, field source, request /)
    assert.equal(refused.stdout, '')
    const unknown = await runCli(['templates', 'show', 'tpl-0123456789abcdef'], env)
    assert.equal(unknown.code, 1)
    assert.match(unknown.stderr, /NOT_FOUND, HTTP 404/)
    for (const [args, message] of [
      [['templates', 'push', file('strategy.py', SMA)], /the language comes from the extension/],
      [['templates', 'push', path.join(dir, 'missing.js')], /cannot read .*missing\.js/],
      [['templates', 'show', 'sma_cross', '--source'], /built-in template: it has no module source/],
      [['templates', 'show', 'sma_cross', '--version', 'one'], /not an integer/],
    ] as const) {
      const result = await runCli([...args], env)
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`)
      assert.match(result.stderr, message)
    }
    assert.equal((await client.templates.list()).filter((t) => t.custom && t.name === 'broken').length, 0)
  })
})

describe('perpetua templates types', () => {
  it('prints the module types as a .d.ts an author type-checks against outside a clone, with no server or key', async () => {
    const dir = tempDir('cli-templates-types')
    try {
      const result = await runCli(['templates', 'types'], { HOME: dir })
      assert.equal(result.code, 0, result.stderr)
      assert.equal(result.stdout, fs.readFileSync('src/strategy-types.ts', 'utf8').replace(/\n$/, '') + '\n')
      // `perpetua templates types > perpetua-strategy.d.ts` beside a module, as the guide shows, and tsc finds a wrong type.
      fs.writeFileSync(path.join(dir, 'perpetua-strategy.d.ts'), result.stdout)
      const module = (onBar: string) => `import type { Bar, ParamValues, SingleSymbolStrategy, StrategyContext, StrategyParams } from './perpetua-strategy.js'
export const params = { period: { type: 'integer', default: 14, minimum: 2, maximum: 500 } } satisfies StrategyParams
type Params = ParamValues<typeof params>
export function create(p: Params, ctx: StrategyContext): SingleSymbolStrategy {
  return { onBar: (bar: Bar) => ${onBar} }
}
`
      const check = (source: string) => {
        fs.writeFileSync(path.join(dir, 'strategy.ts'), source)
        const options = { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, types: [] }
        const program = ts.createProgram([path.join(dir, 'strategy.ts')], options)
        return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
      }
      assert.deepEqual(check(module('bar.close > 0 ? 1 : 0')), [])
      assert.ok(check(module("'long'")).length > 0, 'a string target type-checks')
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
