import { getTemplate, validateParams } from '../templates/index.js'
import type { TemplateCatalog } from './config-resolution.js'

/** The job API's view of the strategy templates. */
export const templateCatalog: TemplateCatalog = {
  resolve(templateId, params) {
    const template = getTemplate(templateId)
    return { params: validateParams(templateId, params), multiSymbol: template.multiSymbol, minCapital: template.minCapital }
  },
}
