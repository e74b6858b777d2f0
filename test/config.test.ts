import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { ConfigError, loadConfig } from '../src/config.js'

/** The ConfigError thrown for `env`, or a failure if loadConfig accepts it. */
function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env)
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`)
    for (const problem of error.problems) assert.ok(error.message.includes(problem), 'the message lists every problem')
    return error.problems
  }
  assert.fail(`loadConfig accepted ${JSON.stringify(env)}`)
}

describe('loadConfig', () => {
  it('has the defaults of DESIGN §2 for an empty environment', () => {
    const config = loadConfig({})
    assert.equal(config.port, 8080)
    assert.equal(config.host, '127.0.0.1')
    assert.equal(config.dataDir, path.resolve('./.perpetua'))
    assert.equal(config.databaseUrl, undefined, 'unset = embedded PGlite in DATA_DIR/pg')
    assert.equal(config.redisUrl, undefined)
    assert.equal(config.upstreamUrl, undefined, 'unset = the built-in replay exchange')
    assert.equal(config.upstreamDataUrl, undefined)
    assert.equal(config.masterKey, undefined, 'unset = generated into DATA_DIR/master.key')
    assert.equal(config.appJwtSecret, undefined)
    assert.equal(config.appJwtTtlSeconds, 3600)
    assert.deepEqual(config.idpa, { issuer: undefined, audience: undefined, jwksUrl: undefined })
    assert.deepEqual(config.idpb, { issuer: undefined, audience: undefined, jwksUrl: undefined })
    assert.equal(config.webhookAllowPrivateHosts, false)
    assert.equal(config.workers, Math.max(1, os.availableParallelism() - 1))
    assert.equal(config.historyCacheMb, 64, 'DESIGN §9: the decoded-history cache defaults to 64 MB')
    assert.equal(config.logLevel, 'info')
    assert.equal(config.weightPerMinute, 1200, 'DESIGN §5: 1200 per 60 s on /v1')
    assert.equal(config.sandboxThreads, 2)
  })

  it('defaults UPSTREAM_DATA_URL to UPSTREAM_URL (DESIGN §2)', () => {
    const config = loadConfig({ UPSTREAM_URL: 'https://fapi.binance.com' })
    assert.equal(config.upstreamUrl, 'https://fapi.binance.com')
    assert.equal(config.upstreamDataUrl, 'https://fapi.binance.com')
  })

  it('reads UPSTREAM_ARCHIVE_URL: a URL, "off", or unset (the built-in replay exchange decides, src/upstream.ts)', () => {
    assert.equal(loadConfig({ UPSTREAM_ARCHIVE_URL: 'https://data.binance.vision/' }).upstreamArchiveUrl, 'https://data.binance.vision')
    assert.equal(loadConfig({ UPSTREAM_ARCHIVE_URL: 'OFF' }).upstreamArchiveUrl, 'off')
    assert.equal(loadConfig({}).upstreamArchiveUrl, undefined)
    assert.deepEqual(problemsOf({ UPSTREAM_ARCHIVE_URL: 'ftp://archive.example' }), ['UPSTREAM_ARCHIVE_URL must be a URL starting with http:// or https://'])
  })

  it('treats empty and blank values as unset', () => {
    const config = loadConfig({ PORT: '', HOST: '  ', DATABASE_URL: '', MASTER_KEY: ' ', LOG_LEVEL: '' })
    assert.equal(config.port, 8080)
    assert.equal(config.host, '127.0.0.1')
    assert.equal(config.databaseUrl, undefined)
    assert.equal(config.masterKey, undefined)
    assert.equal(config.logLevel, 'info')
  })

  it('reads every variable it is given', () => {
    const key = crypto.randomBytes(32)
    const config = loadConfig({
      PORT: '0',
      HOST: '0.0.0.0',
      DATA_DIR: '/tmp/perpetua-config-test',
      DATABASE_URL: 'postgres://u@db.example:5432/perpetua',
      REDIS_URL: 'redis://cache.example:6379',
      UPSTREAM_URL: 'https://fapi.binance.com/',
      UPSTREAM_DATA_URL: 'https://data.example',
      MASTER_KEY: key.toString('base64'),
      APP_JWT_SECRET: key.toString('base64url'),
      APP_JWT_TTL: '600',
      IDPA_ISSUER: 'https://idpa.example',
      IDPA_AUDIENCE: 'perpetua',
      IDPA_JWKS_URL: 'https://idpa.example/jwks',
      WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true',
      WORKERS: '3',
      HISTORY_CACHE_MB: '0',
      LOG_LEVEL: 'debug',
      SANDBOX_THREADS: '4',
    })
    assert.equal(config.port, 0)
    assert.equal(config.host, '0.0.0.0')
    assert.equal(config.dataDir, '/tmp/perpetua-config-test')
    assert.equal(config.databaseUrl, 'postgres://u@db.example:5432/perpetua')
    assert.equal(config.redisUrl, 'redis://cache.example:6379')
    assert.equal(config.upstreamUrl, 'https://fapi.binance.com', 'a trailing slash is dropped')
    assert.equal(config.upstreamDataUrl, 'https://data.example')
    assert.deepEqual(config.masterKey, key)
    assert.deepEqual(config.appJwtSecret, key, 'base64url is accepted too')
    assert.equal(config.appJwtTtlSeconds, 600)
    assert.deepEqual(config.idpa, { issuer: 'https://idpa.example', audience: 'perpetua', jwksUrl: 'https://idpa.example/jwks' })
    assert.equal(config.webhookAllowPrivateHosts, true)
    assert.equal(config.workers, 3)
    assert.equal(config.historyCacheMb, 0, 'no cache')
    assert.equal(config.logLevel, 'debug')
    assert.equal(config.sandboxThreads, 4)
  })

  it('reports every bad key at once in one ConfigError', () => {
    const problems = problemsOf({
      PORT: 'abc',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'mysql://db.example/x',
      MASTER_KEY: 'not a key',
      WORKERS: '0',
      HISTORY_CACHE_MB: '-1',
      WEBHOOK_ALLOW_PRIVATE_HOSTS: 'maybe',
      APP_JWT_TTL: '1.5',
      IDPB_JWKS_URL: 'ftp://idpb.example/jwks',
      SANDBOX_THREADS: '0',
      METRICS_ADDR: '9464',
      HOST: 'localhost', // valid: not reported
    })
    const keys = problems.map((p) => p.split(' ')[0]).sort()
    assert.deepEqual(keys, [
      'APP_JWT_TTL',
      'DATABASE_URL',
      'HISTORY_CACHE_MB',
      'IDPB_JWKS_URL',
      'LOG_LEVEL',
      'MASTER_KEY',
      'METRICS_ADDR',
      'PORT',
      'SANDBOX_THREADS',
      'WEBHOOK_ALLOW_PRIVATE_HOSTS',
      'WORKERS',
    ])
    assert.match(problems.find((p) => p.startsWith('PORT'))!, /"abc"/)
  })

  it('refuses ports out of range', () => {
    assert.deepEqual(
      problemsOf({ PORT: '65536' }).map((p) => p.split(' ')[0]),
      ['PORT'],
    )
    assert.equal(problemsOf({ PORT: '-1' }).length, 1)
    assert.equal(loadConfig({ PORT: '65535' }).port, 65535)
  })

  it('refuses a MASTER_KEY or APP_JWT_SECRET that is not exactly 32 bytes', () => {
    for (const bytes of [16, 31, 33, 64]) {
      const value = crypto.randomBytes(bytes).toString('base64')
      assert.deepEqual(problemsOf({ MASTER_KEY: value }), ['MASTER_KEY must be 32 bytes encoded as base64 (e.g. from: openssl rand -base64 32)'], `${bytes} bytes`)
      assert.equal(problemsOf({ APP_JWT_SECRET: value }).length, 1)
    }
    // 32 bytes of hex is 64 characters that also decode as base64 (to 48 bytes): refused, not misread.
    assert.equal(problemsOf({ MASTER_KEY: crypto.randomBytes(32).toString('hex') }).length, 1)
    // Characters outside base64 are refused rather than skipped by the lenient decoder.
    const key = crypto.randomBytes(32).toString('base64')
    assert.equal(problemsOf({ MASTER_KEY: `${key.slice(0, 20)}!${key.slice(20)}` }).length, 1)
    assert.equal(loadConfig({ MASTER_KEY: key }).masterKey?.length, 32)
  })
})
