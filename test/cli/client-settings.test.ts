import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import { UsageError } from '../../src/cli/cli-errors.js'
import { DEFAULT_URL, resolveClientSettings } from '../../src/cli/client-settings.js'
import { ConfigError, loadClientEnvironment } from '../../src/config.js'
import { tempDir } from '../support/database.js'

describe('the client commands read their settings from the environment and a profile file', () => {
  const dir = tempDir('profiles')
  after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'profiles.json')
  const write = (profiles: unknown, mode = 0o600) => {
    fs.writeFileSync(file, JSON.stringify(profiles))
    fs.chmodSync(file, mode)
  }
  const resolve = (vars: Record<string, string>, flag?: string) => {
    const warnings: string[] = []
    const settings = resolveClientSettings(loadClientEnvironment({ PERPETUA_PROFILES: file, ...vars }), flag, (line) => warnings.push(line))
    return { ...settings, warnings }
  }

  it('finds the file under XDG_CONFIG_HOME, else HOME/.config', () => {
    assert.equal(loadClientEnvironment({ XDG_CONFIG_HOME: '/x/conf', HOME: '/home/a' }).profilesFile, '/x/conf/perpetua/profiles.json')
    assert.equal(loadClientEnvironment({ HOME: '/home/a' }).profilesFile, '/home/a/.config/perpetua/profiles.json')
  })

  it('uses the environment, the default URL when none is set, and no file at all', () => {
    fs.rmSync(file, { force: true })
    assert.deepEqual(resolve({}), { url: DEFAULT_URL, credentials: undefined, source: 'the defaults', warnings: [] })
    const env = resolve({ PERPETUA_URL: 'https://perpetua.example/', PERPETUA_API_KEY: 'pk_1', PERPETUA_API_SECRET: 's1' })
    assert.equal(env.url, 'https://perpetua.example')
    assert.deepEqual(env.credentials, { apiKey: 'pk_1', apiSecret: 's1' })
    assert.deepEqual(resolve({ PERPETUA_TOKEN: 'jwt' }).credentials, { token: 'jwt' })
  })

  it('refuses half a key, a key with a token, and a URL that is not http(s), all at once', () => {
    assert.throws(
      () => loadClientEnvironment({ PERPETUA_API_KEY: 'pk_1', PERPETUA_TOKEN: 't', PERPETUA_URL: 'ftp://x' }),
      (error: unknown) => error instanceof ConfigError && error.problems.length === 3,
    )
  })

  it('fills what the environment lacks from the default profile, or the one PERPETUA_PROFILE names', () => {
    write({ default: { url: 'http://a.test', api_key: 'pk_a', api_secret: 'sa' }, b: { url: 'http://b.test', token: 'tb' } })
    assert.deepEqual(resolve({}).credentials, { apiKey: 'pk_a', apiSecret: 'sa' })
    const mixed = resolve({ PERPETUA_URL: 'http://env.test' })
    assert.equal(mixed.url, 'http://env.test')
    assert.deepEqual(mixed.credentials, { apiKey: 'pk_a', apiSecret: 'sa' })
    assert.deepEqual(resolve({ PERPETUA_API_KEY: 'pk_e', PERPETUA_API_SECRET: 'se' }).credentials, { apiKey: 'pk_e', apiSecret: 'se' })
    const named = resolve({ PERPETUA_PROFILE: 'b' })
    assert.equal(named.url, 'http://b.test')
    assert.deepEqual(named.credentials, { token: 'tb' })
  })

  it('--profile takes that profile whole, whatever the environment says', () => {
    write({ b: { url: 'http://b.test', token: 'tb' } })
    const settings = resolve({ PERPETUA_URL: 'http://env.test', PERPETUA_API_KEY: 'pk_e', PERPETUA_API_SECRET: 'se' }, 'b')
    assert.equal(settings.url, 'http://b.test')
    assert.deepEqual(settings.credentials, { token: 'tb' })
  })

  it('says what is wrong with a profile, naming it and the file', () => {
    const refused = (profiles: unknown, pattern: RegExp, flag = 'p') => {
      write(profiles)
      assert.throws(() => resolve({}, flag), (error: unknown) => error instanceof UsageError && pattern.test(error.message))
    }
    refused({ q: {} }, /profile "p" is not in .*profiles\.json \(it has q\)/)
    refused({ p: { url: 'http://x', apikey: 'k' } }, /profile "p" in .* has an unknown field "apikey"/)
    refused({ p: { api_key: 'k' } }, /api_key and api_secret go together/)
    refused({ p: { api_key: 'k', api_secret: 's', token: 't' } }, /either api_key\/api_secret or token/)
    refused({ p: { url: 'localhost:8080' } }, /url must start with http:\/\/ or https:\/\//)
    refused([1], /must hold a JSON object of profiles by name/)
    fs.writeFileSync(file, '{oops')
    assert.throws(() => resolve({}, 'p'), /is not JSON/)
    fs.rmSync(file)
    assert.throws(() => resolve({}, 'p'), /there is no profile file at/)
    assert.throws(() => resolve({ PERPETUA_PROFILE: 'p' }), /there is no profile file at/)
  })

  it('warns when others can read a profile file that holds secrets', () => {
    write({ default: { token: 't' } }, 0o644)
    assert.match(resolve({}).warnings.join('\n'), /holds secrets and others can read it; chmod 600/)
    write({ default: { token: 't' } }, 0o600)
    assert.deepEqual(resolve({}).warnings, [])
  })
})
