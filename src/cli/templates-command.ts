import fs from 'node:fs'
import path from 'node:path'
import { Command } from 'commander'
import type { CustomTemplate, Template, TemplateDetail } from '../client/operations.js'
import { UsageError } from './cli-errors.js'
import type { CliContext } from './context.js'
import { fieldTable, NONE, printJson, table, time } from './output.js'
import { integer } from './parse.js'

/** The language of a module file, by its extension (the API strips types from typescript). */
const LANGUAGES: Record<string, 'javascript' | 'typescript'> = {
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.ts': 'typescript',
  '.mts': 'typescript',
}

/** `perpetua templates [push|show|types]`: what `--template` and `--param` accept, and your own modules. */
export function templatesCommand(context: CliContext): Command {
  const templates = new Command('templates').description(
    'the strategy templates: the built-ins and your own modules (signed; push and show: scopes strategies:write, strategies:read)',
  )

  // The default subcommand: `perpetua templates [--json]` lists, as it did before push and show.
  templates
    .command('list', { isDefault: true })
    .description('every template you can use, the built-ins then your own, with their parameters and defaults (the default: perpetua templates)')
    .option('--json', "print the API's answer exactly (with each parameter schema)")
    .action(async (options: { json?: boolean }, command: Command) => {
      const answer = await context.client(command, 'signed').get('/v1/templates')
      if (options.json) return printJson(context.output, answer)
      context.output.out(
        table(
          ['id', 'version', 'params (defaults)', 'symbols', 'min capital', 'description'],
          answer.data.map((t) => [t.id, t.custom ? t.version : 'built-in', defaults(t.defaults), symbols(t), t.min_capital, describe(t)]),
          { 2: 36, 5: 60 },
        ),
      )
    })

  templates
    .command('push')
    .description('upload a strategy module (.js or .ts) as a new template, or as a new version of one with --id')
    .argument('<file>', 'the module: .js/.mjs (javascript) or .ts/.mts (typescript)')
    .option('--name <name>', "the template's name (default: the file name without extension, for a new template)")
    .option('--id <id>', 'upload a new version of this template (tpl-…) instead of creating one')
    .option('--description <text>', 'at most 1000 characters')
    .option('--json', "print the API's answer exactly")
    .action(async (file: string, options: { name?: string; id?: string; description?: string; json?: boolean }, command: Command) => {
      const language = LANGUAGES[path.extname(file).toLowerCase()]
      if (!language) throw new UsageError(`${file}: the language comes from the extension, one of ${Object.keys(LANGUAGES).join(', ')}`)
      const source = readModule(file)
      const client = context.client(command, 'signed').templates
      const stored: CustomTemplate =
        options.id === undefined
          ? await client.create({ name: options.name ?? path.basename(file, path.extname(file)), source, language, description: options.description })
          : await client.update(options.id, { source, language, name: options.name, description: options.description })
      if (options.json) return printJson(context.output, stored)
      context.output.out(`${stored.id} version ${stored.version}`)
    })

  templates
    .command('show')
    .description('one template: its parameters, and for yours its versions (--source: the module text only)')
    .argument('<id>', 'a built-in id (sma_cross) or one of yours (tpl-…)')
    .option('--version <n>', 'an older version of one of yours', integer)
    .option('--source', 'print only the source of the module, exactly as uploaded')
    .option('--json', "print the API's answer exactly")
    .action(async (id: string, options: { version?: number; source?: boolean; json?: boolean }, command: Command) => {
      const template = await context.client(command, 'signed').templates.get(id, options.version)
      if (options.json) return printJson(context.output, template)
      if (options.source) {
        if (!template.custom) throw new UsageError(`${id} is a built-in template: it has no module source`)
        return context.output.out(template.source.replace(/\n$/, '')) // out() ends the text with one newline
      }
      printTemplate(context, template)
    })

  templates
    .command('types')
    .description("print the strategy module's TypeScript types (what `perpetua/strategy` names in a clone): perpetua templates types > perpetua-strategy.d.ts")
    .action(() => {
      context.output.out(strategyTypes().replace(/\n$/, '')) // out() ends the text with one newline
    })

  return templates
}

/**
 * The module contract's types as a .d.ts text, read from beside this file: tsc's declaration output in
 * dist (the bundle rewrites import.meta.url to tsc's file, scripts/bundle-cli.ts), else the source when
 * run from a clone through tsx. src/strategy-types.ts holds types only, so its text is itself a valid
 * .d.ts. Why a command: outside a clone `perpetua/strategy` does not resolve (the package is not
 * published), and an author's editor needs the types (issue 35).
 */
function strategyTypes(): string {
  for (const name of ['../strategy-types.d.ts', '../strategy-types.ts']) {
    try {
      return fs.readFileSync(new URL(name, import.meta.url), 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  throw new Error('the strategy types are missing beside the perpetua command (strategy-types.d.ts): reinstall it')
}

function readModule(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`)
  }
}

function printTemplate({ output }: CliContext, template: TemplateDetail): void {
  const rows: [string, string | number][] = [['id', template.id]]
  if (template.custom) {
    rows.push(['name', template.name], ['version', template.version], ['language', template.language], ['sha256', template.sha256], ['warmup (defaults)', template.warmup])
  }
  rows.push(['symbols', symbols(template)], ['min capital', template.min_capital], ['description', template.description ?? NONE])
  if (template.custom) rows.push(['created', time(template.created_at)], ['updated', time(template.updated_at)])
  output.out(fieldTable(rows))
  const properties = (template.params_schema.properties ?? {}) as Record<string, { type?: string; default?: unknown; minimum?: number; maximum?: number; description?: string }>
  output.out(
    table(
      ['param', 'type', 'default', 'minimum', 'maximum', 'description'],
      Object.entries(properties).map(([name, p]) => [name, p.type ?? NONE, JSON.stringify(p.default), p.minimum ?? NONE, p.maximum ?? NONE, p.description ?? NONE]),
    ),
  )
  if (template.custom) output.out(table(['version', 'sha256', 'uploaded'], template.versions.map((v) => [v.version, v.sha256, time(v.created_at)])))
}

const defaults = (values: Record<string, unknown>): string => Object.entries(values).map(([name, value]) => `${name}=${JSON.stringify(value)}`).join(' ') || NONE

const symbols = (t: Pick<Template, 'multi_symbol' | 'min_symbols' | 'max_symbols'>): string => (t.multi_symbol ? `${t.min_symbols}..${t.max_symbols ?? ''}` : '1')

const describe = (t: Template): string => (t.custom ? (t.description ? `${t.name}: ${t.description}` : t.name) : t.description)
