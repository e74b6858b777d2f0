import type { Command } from 'commander'
import { type Output, printJson } from './output.js'
import { integer } from './parse.js'

/** The flags every cursor list takes. */
export interface ListFlags {
  limit?: number
  cursor?: string
  all?: boolean
  json?: boolean
}

/** Adds --limit, --cursor, --all and --json to a list command. */
export function withListFlags(command: Command, things: string, limits: string): Command {
  return command
    .option('--limit <n>', `${things} per page${limits}`, integer)
    .option('--cursor <cursor>', 'the page after a previous list (its next_cursor)')
    .option('--all', `every page (with --json: one array of every item)`)
    .option('--json', "print the API's page exactly ({data, next_cursor})")
}

/**
 * Prints one page (the API's page with --json, else the table and a note on stderr when more pages
 * follow) or, with --all, every item the client's cursor iteration yields.
 */
export async function printList<T>(
  output: Output,
  flags: ListFlags,
  source: { page(cursor: string | undefined): Promise<{ data: T[]; next_cursor: string | null }>; all(): AsyncIterable<T> },
  print: (items: T[]) => void | Promise<void>,
  commandLine: string,
): Promise<void> {
  if (flags.all) {
    const items: T[] = []
    for await (const item of source.all()) items.push(item)
    return flags.json ? printJson(output, items) : await print(items)
  }
  const page = await source.page(flags.cursor)
  if (flags.json) return printJson(output, page)
  await print(page.data)
  if (page.next_cursor) output.err(`more: ${commandLine} --cursor ${page.next_cursor} (or --all)`)
}
