import type { Db } from '../db/connect.js'
import { AppError } from '../http/errors.js'
import { isCustomTemplateId } from '../custom-templates/ids.js'
import { findCustomVersion } from '../custom-templates/queries.js'
import type { StrategySandbox } from '../custom-templates/sandbox/contract.js'
import { customTemplateBounds } from '../custom-templates/sandbox/custom-template.js'
import { getTemplate, validateParams } from '../templates/index.js'
import type { TemplateCatalog } from './config-resolution.js'

/** The job API's view of the strategy templates: the built-ins, and the caller's own modules through the sandbox. */
export function templateCatalog(db: Db, sandbox: StrategySandbox): TemplateCatalog {
  return {
    async resolve(userId, templateId, params) {
      if (!isCustomTemplateId(templateId)) {
        const template = getTemplate(templateId)
        return { params: validateParams(templateId, params), multiSymbol: template.multiSymbol, minCapital: template.minCapital }
      }
      const found = await findCustomVersion(db, userId, templateId)
      if (!found) throw new AppError('INVALID_PARAMETER', `unknown template_id "${templateId}"`, { field: 'template_id' })
      const resolved = await sandbox.resolveParams(found.compiled, found.description, params)
      const multiSymbol = found.description.multiSymbol
      return {
        params: resolved.params,
        multiSymbol,
        minCapital: customTemplateBounds(multiSymbol).minCapital,
        version: { number: found.version, sha256: found.compiled.sha256 },
      }
    },
  }
}
