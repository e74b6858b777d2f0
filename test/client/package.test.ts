import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { CLIENT_TYPES_FILE, clientTypes } from '../../scripts/client-types.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { bin: Record<string, string>; exports: Record<string, { types: string; default: string }> }

describe('the perpetua/client package export', () => {
  it('points at the built client and its declarations, and keeps the bin', () => {
    assert.deepEqual(pkg.exports['./client'], { types: './dist/client/index.d.ts', default: './dist/client/index.js' })
    assert.equal(pkg.bin.perpetua, 'dist/cli.js')
  })

  it('resolves by package name after `npm run build`', async (t) => {
    if (!existsSync(`${root}dist/client/index.js`)) return t.skip('dist/client is not built here: run `npm run build` (npm ci does) to check the import')
    const client = (await import('perpetua/client' as string)) as Record<string, unknown>
    for (const name of ['PerpetuaClient', 'PerpetuaError', 'verifyWebhook', 'paginate', 'signRequest']) assert.equal(typeof client[name], 'function', name)
    assert.ok(existsSync(`${root}dist/client/index.d.ts`))
  })

  it('is safe for browser bundles: its modules import only each other (no node: built-ins, no packages)', () => {
    const folder = `${root}src/client/`
    for (const file of readdirSync(folder).filter((name) => name.endsWith('.ts'))) {
      const text = readFileSync(folder + file, 'utf8')
      for (const match of text.matchAll(/^\s*(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)) {
        assert.match(match[1]!, /^\.\//, `${file} imports ${match[1]}`)
      }
    }
  })

  it("has types generated from the app's current OpenAPI document (rebuild when this fails)", async () => {
    assert.ok(existsSync(CLIENT_TYPES_FILE), 'src/client/generated/openapi.ts is missing: run `npm run build`')
    assert.equal(readFileSync(CLIENT_TYPES_FILE, 'utf8'), await clientTypes(), 'the generated client types are stale: run `npm run client:types`')
  })
})
