import assert from 'node:assert/strict'
import path from 'node:path'
import { describe, it } from 'node:test'
import { type Edge, importCircles, importGraph, importsOf } from './import-graph.js'

const ROOT = path.resolve(import.meta.dirname, '../..')

/** Import circles still accepted, each as the sorted files it runs through: a new circle, or a known one grown, fails. */
const ACCEPTED_CIRCLES: readonly (readonly string[])[] = []

/** The pure core (engine and templates): no I/O, nothing of the HTTP edge or the database. */
const PURE = ['src/engine/', 'src/templates/']
const EDGE = ['src/http/', 'src/db/']
/** Modules that reach files, sockets, processes, threads or databases. */
const IO_MODULES = ['fs', 'net', 'http', 'https', 'http2', 'tls', 'dgram', 'dns', 'child_process', 'worker_threads', 'cluster', 'readline', 'undici', 'pg', 'pg-boss', 'kysely', 'ioredis', '@electric-sql/pglite', 'fastify', 'ws']

/** The Binance look-alike knows nothing of Perpetua: of the rest of src/ it reads Binance's formats only. */
const REPLAY = 'src/replay-exchange/'
const BINANCE_FORMATS = 'src/binance-formats/'

const isIoModule = (specifier: string) => {
  const name = specifier.replace(/^node:/, '')
  return IO_MODULES.some((module) => name === module || name.startsWith(`${module}/`))
}
const under = (folders: readonly string[], file: string) => folders.some((folder) => file.startsWith(folder))
const isSourceFile = (to: string) => to.startsWith('src/')

describe('the import graph of src/', () => {
  const graph = importGraph(ROOT, 'src')

  it('is read from every kind of import: value, type-only, re-export, import() and import types', () => {
    const text = [
      "import a from './a.js'",
      "import type { B } from './b.js'",
      "import { type C } from './c.js'",
      "export { d } from './d.js'",
      "export type { E } from './e.js'",
      "const f = await import('./f.js')",
      "let g: import('./g.js').G",
      'const h = await import(name)',
    ].join('\n')
    assert.deepEqual(importsOf('x.ts', text), [
      { specifier: './a.js', kind: 'value' },
      { specifier: './b.js', kind: 'type' },
      { specifier: './c.js', kind: 'value' },
      { specifier: './d.js', kind: 'value' },
      { specifier: './e.js', kind: 'type' },
      { specifier: './f.js', kind: 'dynamic' },
      { specifier: './g.js', kind: 'type' },
    ])
    const kinds = new Set([...graph.values()].flat().filter((edge) => graph.has(edge.to)).map((edge) => edge.kind))
    assert.deepEqual([...kinds].sort(), ['dynamic', 'type', 'value'], 'src/ holds all three kinds between its own files')
  })

  it('finds circles of any length, self-imports included, and names one closed path through each', () => {
    const edges = (...to: string[]): Edge[] => to.map((file) => ({ to: file, kind: 'value' }))
    const toy = new Map([
      ['a', edges('b')],
      ['b', edges('c', 'x')],
      ['c', edges('a')],
      ['d', edges('d')],
      ['e', edges('a')],
      ['x', edges()],
    ])
    assert.deepEqual(importCircles(toy), [
      ['a', 'b', 'c', 'a'],
      ['d', 'd'],
    ])
  })

  it('has no import circles (value, type-only or dynamic) but the accepted ones', () => {
    const accepted = new Set(ACCEPTED_CIRCLES.map((files) => [...files].sort().join(' ')))
    const circles = importCircles(graph).filter((circle) => !accepted.has([...new Set(circle)].sort().join(' ')))
    assert.deepEqual(circles.map((circle) => circle.join(' → ')), [], 'cut each circle: move what both sides need to a file both import')
  })

  it('keeps templates/ and engine/ pure: nothing they reach is of http/ or db/, or imports an I/O module', () => {
    // Breadth first from every pure file at once, remembering how each file was reached.
    const reachedFrom = new Map<string, string | undefined>([...graph.keys()].filter((file) => under(PURE, file)).map((file) => [file, undefined]))
    const chain = (file: string): string => {
      const steps = [file]
      for (let at = reachedFrom.get(file); at !== undefined; at = reachedFrom.get(at)) steps.unshift(at)
      return steps.join(' → ')
    }
    const faults: string[] = []
    for (const file of reachedFrom.keys()) {
      if (under(EDGE, file)) faults.push(chain(file))
      for (const { to } of graph.get(file) ?? []) {
        if (isIoModule(to)) faults.push(`${chain(file)} → ${to}`)
        else if (isSourceFile(to) && !reachedFrom.has(to)) reachedFrom.set(to, file)
      }
    }
    assert.ok(reachedFrom.size > 20, `the pure core was read (${reachedFrom.size} files)`)
    assert.deepEqual(faults, [])
  })

  it('keeps the replay exchange apart: of the rest of src/ it imports binance-formats/ only, which imports none of it', () => {
    const faults: string[] = []
    for (const [file, edges] of graph) {
      for (const { to } of edges.filter((edge) => isSourceFile(edge.to))) {
        if (file.startsWith(REPLAY) && !to.startsWith(REPLAY) && !to.startsWith(BINANCE_FORMATS)) faults.push(`${file} → ${to}`)
        if (file.startsWith(BINANCE_FORMATS) && !to.startsWith(BINANCE_FORMATS)) faults.push(`${file} → ${to}`)
      }
    }
    assert.ok([...graph.keys()].some((file) => file.startsWith(REPLAY)), 'the replay exchange was read')
    assert.deepEqual(faults, [])
  })
})
