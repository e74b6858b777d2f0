import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isCustomTemplateId } from '../../src/custom-templates/ids.js'
import { TEMPLATES } from '../../src/templates/registry.js'

describe('built-in template ids', () => {
  // Custom template ids are tpl-<16 hex> (custom-templates/ids.ts): the '-' keeps them apart from every
  // built-in id, now and later, as long as built-in ids stay [a-z0-9_].
  it('are lowercase letters, digits and underscores, so no custom template id can ever equal one', () => {
    assert.ok(TEMPLATES.length >= 8)
    for (const template of TEMPLATES) {
      assert.match(template.id, /^[a-z][a-z0-9_]*$/, template.id)
      assert.equal(isCustomTemplateId(template.id), false, template.id)
    }
  })
})
