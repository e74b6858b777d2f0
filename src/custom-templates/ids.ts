import crypto from 'node:crypto'

/**
 * Custom template ids: `tpl-` and 16 lowercase hex digits. Built-in ids are [a-z0-9_] only
 * (test/templates/registry.test.ts), so the '-' keeps the two sets apart now and later. 64 random
 * bits (other ids have 32 and retry on a collision): a collision is too unlikely to need a retry path.
 */
const CUSTOM_TEMPLATE_ID = /^tpl-[0-9a-f]{16}$/

export function newCustomTemplateId(): string {
  return `tpl-${crypto.randomBytes(8).toString('hex')}`
}

/** Whether a template_id names a custom template (or could: ids not of this form are never queried). */
export function isCustomTemplateId(id: string): boolean {
  return CUSTOM_TEMPLATE_ID.test(id)
}
