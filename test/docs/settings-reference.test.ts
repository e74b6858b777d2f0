import assert from 'node:assert/strict'
import fs from 'node:fs'
import { describe, it } from 'node:test'
import { CONFIG_FILE, GUIDE_FILE, readSettings, referenceProblems } from '../../scripts/settings-reference.js'

const config = () => fs.readFileSync(CONFIG_FILE, 'utf8')
const guide = () => fs.readFileSync(GUIDE_FILE, 'utf8')

describe("the operator's guide's settings reference", () => {
  it('lists every setting src/config.ts reads, as the generator writes it, and none it does not read', () => {
    const problems = referenceProblems(readSettings(config()), guide())
    assert.deepEqual(problems, [], `${problems.join('\n')}\n(run: node --import tsx scripts/settings-reference.ts --write)`)
  })

  it('reads every kind of setting config.ts has: typed reads, fallbacks after ??, identity providers, locals', () => {
    const byName = new Map(readSettings(config()).map((s) => [s.name, s]))
    assert.equal(byName.get('PORT')?.default, '`8080`')
    assert.equal(byName.get('HOST')?.default, '`127.0.0.1`')
    assert.equal(byName.get('LOG_LEVEL')?.accepts, 'fatal, error, warn, info, debug, trace, silent')
    assert.equal(byName.get('UPSTREAM_ARCHIVE_URL')?.accepts, 'http or https URL', 'the typed one of its two reads')
    assert.ok(byName.get('IDPB_JWKS_URL'), 'a provider prefix gives three settings')
    assert.ok(byName.get('UPSTREAM_URL')?.meaning.startsWith('Binance USD-M'), 'a local read takes the doc of the field that uses it')
    assert.equal(byName.get('PERPETUA_URL')?.group, 'client')
    for (const setting of byName.values()) assert.notEqual(setting.meaning, '', `${setting.name} has a meaning (a doc comment in config.ts)`)
  })

  it('fails on a setting added to config.ts without the guide, on a row left after a setting is gone, and on a stale default', () => {
    const added = config().replace("port: read.integer('PORT', 8080, 0, 65535),", "port: read.integer('PORT', 8080, 0, 65535),\n    extra: read.integer('NEW_KNOB', 1, 0, 2),")
    assert.match(referenceProblems(readSettings(added), guide()).join('\n'), /NEW_KNOB is read by src\/config\.ts but missing from the guide/)
    const removed = config().replace("    sandboxThreads: read.integer('SANDBOX_THREADS', 2, 1, 32),\n", '')
    assert.match(referenceProblems(readSettings(removed), guide()).join('\n'), /SANDBOX_THREADS is in the guide but src\/config\.ts does not read it/)
    const changed = config().replace("read.integer('PORT', 8080,", "read.integer('PORT', 9090,")
    assert.match(referenceProblems(readSettings(changed), guide()).join('\n'), /PORT: the guide says/)
  })
})
