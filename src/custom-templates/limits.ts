/**
 * What one user may store (docs/decisions.md, "Custom templates API"). The sandbox's own limits
 * (memory, CPU, warm-up cap) live in sandbox/limits.ts.
 */

/** Largest module source, in UTF-8 bytes: Shopify Functions' 256 KB (research/custom-strategies.md §3.1). */
export const MAX_SOURCE_BYTES = 256 * 1024

/** Live (not deleted) custom templates per user. */
export const MAX_TEMPLATES_PER_USER = 50

/** Versions per template; every version is kept, so this bounds a template's storage (100 × 256 KiB). */
export const MAX_VERSIONS = 100
