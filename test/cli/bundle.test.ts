import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { PROJECT_ROOT } from './cli-process.js'
import { SERVER_ONLY_PACKAGES, bundleCli, clientCommandInputs } from '../../scripts/bundle-cli.js'

const DIST = path.join(PROJECT_ROOT, 'dist')
const loads = (inputs: string[], name: string) => inputs.some((input) => input.includes(`node_modules/${name}/`) || input === `node_modules/${name}`)

describe('the bundled perpetua command (scripts/bundle-cli.ts)', () => {
  it('keeps the server packages out of what a client command loads', async () => {
    const { metafile } = await bundleCli(DIST)
    const client = clientCommandInputs(metafile, DIST)
    assert.ok(client.includes('src/cli/client-program.ts'), 'the client program is not in what client commands load')
    assert.ok(loads(client, 'commander'), 'commander is not in what client commands load')
    for (const name of SERVER_ONLY_PACKAGES) assert.ok(!loads(client, name), `${name} is in what client commands load`)
    // The same bundle holds Fastify and pg for serve, so the check above looks at the right thing.
    const everything = Object.values(metafile.outputs).flatMap((output) => [...Object.keys(output.inputs), ...output.imports.filter((i) => i.external).map((i) => `node_modules/${i.path}`)])
    for (const name of ['fastify', 'pg', 'kysely', 'pino']) assert.ok(loads(everything, name), `${name} is nowhere in the bundle`)
  })

  it('finds the files it reads beside tsc output: migrate on a fresh DATA_DIR (template, database thread, migrations), twice', async (t) => {
    const cli = path.join(DIST, 'cli.js')
    if (!fs.existsSync(cli) || !fs.readFileSync(cli, 'utf8').includes('cli-chunk-')) {
      return t.skip('dist/cli.js is not the bundle: run `npm run build`')
    }
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bundle-'))
    try {
      const migrate = async () => {
        const { stdout } = await promisify(execFile)(process.execPath, [cli, 'migrate'], {
          cwd: PROJECT_ROOT,
          env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir },
          timeout: 90_000,
        })
        return (JSON.parse(stdout) as { applied: string[] }).applied
      }
      // The first copies the build's template, which has every migration applied (build-pglite-template.ts).
      assert.deepEqual(await migrate(), [])
      assert.ok(fs.existsSync(path.join(dataDir, 'pg', 'PG_VERSION')))
      assert.deepEqual(await migrate(), [])
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
