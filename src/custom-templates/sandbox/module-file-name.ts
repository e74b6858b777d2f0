import type { ModuleLanguage } from './contract.js'

/** The name QuickJS evaluates every module under, which its stacks carry (strategy-error.ts reads positions after it). */
export const MODULE_EVAL_NAME = 'strategy.js'

/**
 * The name a module's error positions give it (`atr-breakout.ts 6:53`): the template's name with its
 * language's extension, which is the uploaded file's name when the CLI named the template after the file
 * (its default). A name already ending in an extension of its language is kept as it is. The upload has
 * no file name field (the spec's request body has name, source, language, description).
 */
export function moduleFileName(name: string, language: ModuleLanguage): string {
  const extensions = language === 'typescript' ? ['.ts', '.mts'] : ['.js', '.mjs']
  return extensions.some((extension) => name.toLowerCase().endsWith(extension)) ? name : `${name}${extensions[0]}`
}
