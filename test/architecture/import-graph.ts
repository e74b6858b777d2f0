import fs from 'node:fs'
import path from 'node:path'
import ts from 'typescript'

/** How a file names another: a value import, a type-only one (erased at build), or an `import()` call. */
export type ImportKind = 'value' | 'type' | 'dynamic'

export interface Import {
  /** As written: './queries.js', 'node:fs', 'undici'. */
  specifier: string
  kind: ImportKind
}

/** Every import of one file: declarations, re-exports, `import()` calls and `import('…').T` types. */
export function importsOf(fileName: string, text: string): Import[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS)
  const found: Import[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, kind: node.importClause?.isTypeOnly ? 'type' : 'value' })
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, kind: node.isTypeOnly ? 'type' : 'value' })
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments
      // A computed specifier (strategy-stream.ts loads `ws` by a name in a variable) names no file here.
      if (argument && ts.isStringLiteralLike(argument)) found.push({ specifier: argument.text, kind: 'dynamic' })
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, kind: 'type' })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** One edge of the graph: `to` is a file (root-relative, 'src/x.ts') for a relative specifier, else the module name. */
export interface Edge {
  to: string
  kind: ImportKind
}

/**
 * The import graph of the .ts/.tsx files under `dir` (relative to `root`): each file, root-relative with
 * forward slashes, to its edges. A relative specifier resolves as TypeScript's NodeNext does for our
 * sources: `./x.js` is `./x.ts` (or `.tsx`), a folder is its `index.ts`.
 */
export function importGraph(root: string, dir: string): Map<string, Edge[]> {
  const graph = new Map<string, Edge[]>()
  for (const file of sourceFiles(path.join(root, dir))) {
    const name = relative(root, file)
    const edges = importsOf(file, fs.readFileSync(file, 'utf8')).map(({ specifier, kind }) => ({
      to: specifier.startsWith('.') ? relative(root, resolveSource(path.resolve(path.dirname(file), specifier))) : specifier,
      kind,
    }))
    graph.set(name, edges)
  }
  return graph
}

/**
 * The import circles: every strongly connected set of files (Tarjan's algorithm), each given as one
 * closed path through it (a → b → a), so a failure shows which imports to cut.
 */
export function importCircles(graph: ReadonlyMap<string, readonly Edge[]>): string[][] {
  const next = (file: string) => [...new Set((graph.get(file) ?? []).map((edge) => edge.to).filter((to) => graph.has(to)))]
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const connect = (file: string): void => {
    index.set(file, index.size)
    low.set(file, index.get(file)!)
    stack.push(file)
    onStack.add(file)
    for (const to of next(file)) {
      if (!index.has(to)) {
        connect(to)
        low.set(file, Math.min(low.get(file)!, low.get(to)!))
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!))
    }
    if (low.get(file) !== index.get(file)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    if (component.length > 1 || next(file).includes(file)) components.push(component)
  }
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) connect(file)
  return components.map((component) => closedPath(component.sort(), next))
}

/** A shortest closed path from the component's first file back to itself (breadth first, within the component). */
function closedPath(component: string[], next: (file: string) => string[]): string[] {
  const members = new Set(component)
  const start = component[0]!
  const cameFrom = new Map<string, string | undefined>([[start, undefined]])
  const queue = [start]
  for (const file of queue) {
    for (const to of next(file)) {
      if (to === start) {
        const steps = [start]
        for (let at: string | undefined = file; at !== undefined; at = cameFrom.get(at)) steps.unshift(at)
        return steps
      }
      if (members.has(to) && !cameFrom.has(to)) {
        cameFrom.set(to, file)
        queue.push(to)
      }
    }
  }
  throw new Error(`${start} is in no circle of ${component.join(', ')}`)
}

function sourceFiles(dir: string): string[] {
  const files: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) files.push(...sourceFiles(full))
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(full)
  }
  return files
}

function resolveSource(target: string): string {
  const base = target.replace(/\.js$/, '')
  for (const candidate of [`${base}.ts`, `${base}.tsx`, path.join(target, 'index.ts')]) if (fs.existsSync(candidate)) return candidate
  return target
}

function relative(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join('/')
}
