import crypto from 'node:crypto'
import { transform } from 'sucrase'
import { invalidParameter } from '../../http/errors.js'
import type { CompiledModule, ModuleLanguage } from './contract.js'
import { SANDBOX_LIMITS } from './limits.js'

/**
 * The module's JavaScript: TypeScript has its types stripped by sucrase, which keeps every line where it
 * was (errors point at the author's own lines); JavaScript is taken as written. Nothing runs here.
 */
export function compileModule(source: string, language: ModuleLanguage): CompiledModule {
  if (Buffer.byteLength(source, 'utf8') > SANDBOX_LIMITS.sourceBytes) {
    throw invalidParameter('source', `source is larger than ${SANDBOX_LIMITS.sourceBytes / 1024} KiB`)
  }
  let code = source
  if (language === 'typescript') {
    try {
      code = transform(source, { transforms: ['typescript'], disableESTransforms: true }).code
    } catch (error) {
      const { message, loc } = error as { message: string; loc?: { line: number; column: number } }
      const at = loc ? ` at ${loc.line}:${loc.column}` : ''
      throw invalidParameter('source', `TypeScript does not parse${at}: ${message.replace(/\s*\(\d+:\d+\)$/, '')}`)
    }
  }
  return { code, sha256: crypto.createHash('sha256').update(code).digest('hex') }
}
