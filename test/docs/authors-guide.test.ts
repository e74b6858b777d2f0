import assert from 'node:assert/strict'
import fs from 'node:fs'
import { describe, it } from 'node:test'
import { TEMPLATES } from '../../src/templates/registry.js'

const GUIDE = 'docs/strategy-authors-guide.md'
const WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve']

describe('the strategy authors guide (docs/strategy-authors-guide.md)', () => {
  it('counts the built-in templates the registry holds', () => {
    const said = /\b(\w+) built-in strategy templates\b/.exec(fs.readFileSync(GUIDE, 'utf8'))?.[1]
    assert.ok(said, 'the guide no longer says how many built-in templates there are')
    assert.equal(said, WORDS[TEMPLATES.length] ?? String(TEMPLATES.length), `the guide says ${said}; src/templates/registry.ts holds ${TEMPLATES.length}`)
  })

  it('shows how to get the module types outside a clone', () => {
    assert.match(fs.readFileSync(GUIDE, 'utf8'), /perpetua templates types > perpetua-strategy\.d\.ts/)
  })
})
