import type { Text } from '@codemirror/state'
import type { Diagnostic } from '@codemirror/lint'

/** A place in the module as the server names it: lines and columns count from 1; some places have no column. */
export interface SourcePosition {
  line: number
  column: number | undefined
}

/**
 * Where a refused upload points, read from the server's message (src/custom-templates/sandbox):
 * the sandbox appends "(atr-breakout.ts 4:18)" or "(atr-breakout.ts 4)" to a module's error, the module
 * named after its template (module-file-name.ts; strategy.js before issue 35), and a TypeScript
 * parse error reads "TypeScript does not parse at 4:18: …". The "at L:C" form counts only before the
 * message's first colon, its own lead: after it comes the module's own error text, where a module's
 * `throw new Error('stop at 3:4')` would otherwise be taken for a place.
 */
export function positionIn(message: string): SourcePosition | undefined {
  const sandbox = /\([^()]*\.m?[jt]s (\d+)(?::(\d+))?\)/.exec(message)
  if (sandbox) return { line: Number(sandbox[1]), column: sandbox[2] === undefined ? undefined : Number(sandbox[2]) }
  const parse = /^[^:]*\bat (\d+):(\d+)/.exec(message)
  if (parse) return { line: Number(parse[1]), column: Number(parse[2]) }
  return undefined
}

/**
 * The editor's diagnostic for a refusal at `at`: the word (or the one character) starting there, or
 * the whole line when the server named no column. A place past the text (the sandbox names the line
 * after the last for an unexpected end) is pulled back to the last line's end.
 */
export function diagnosticAt(doc: Text, at: SourcePosition, message: string): Diagnostic {
  const line = doc.line(Math.min(Math.max(1, at.line), doc.lines))
  if (at.column === undefined) return { from: line.from, to: line.to, severity: 'error', message, source: 'Perpetua' }
  const from = Math.min(line.from + Math.max(1, at.column) - 1, line.to)
  let to = from
  while (to < line.to && /[\w$]/.test(doc.sliceString(to, to + 1))) to++
  if (to === from) to = Math.min(from + 1, line.to)
  return { from, to, severity: 'error', message, source: 'Perpetua' }
}
