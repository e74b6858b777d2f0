import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { anchors, headings } from '../support/markdown-anchors.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const DIR = path.join(ROOT, 'docs/decisions')
/** Where references to the decisions may be written; generated and installed trees are not ours to check. */
const SCANNED = ['README.md', 'package.json', 'src', 'web', 'test', 'scripts', 'bench', 'docs', 'examples', '.ci']
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'generated', '.git'])
const TEXT_FILE = /(\.(ts|tsx|js|mjs|cjs|md|sql|json|html|css|sh)|\/run)$/

const read = (file: string) => fs.readFileSync(file, 'utf8')
const decisionFiles = () => fs.readdirSync(DIR).filter((name) => name.endsWith('.md')).sort()
const areaFiles = () => decisionFiles().filter((name) => name !== 'README.md')

const words = (text: string) => text.split(/\s+/).filter(Boolean).length

/** The old single file's `##` headings and word count, recorded once in docs/decisions/.headings. */
function recorded(): { headings: string[]; words: number } {
  const lines = read(path.join(DIR, '.headings')).split('\n')
  const count = lines.map((line) => /^# words (\d+)$/.exec(line)).find(Boolean)
  assert.ok(count, '.headings has no "# words N" line')
  return { headings: lines.filter((line) => line.startsWith('## ')).map((line) => line.slice(3)), words: Number(count[1]) }
}

function* scannedFiles(entry: string): Generator<string> {
  const full = path.join(ROOT, entry)
  if (!fs.existsSync(full)) return
  if (fs.statSync(full).isFile()) {
    yield full
    return
  }
  for (const child of fs.readdirSync(full, { withFileTypes: true })) {
    if (child.isDirectory() && SKIPPED_DIRS.has(child.name)) continue
    const relative = path.join(entry, child.name)
    if (child.isDirectory()) yield* scannedFiles(relative)
    else if (TEXT_FILE.test(relative)) yield path.join(ROOT, relative)
  }
}

/** Every line of the scanned files that names a file of docs/decisions, with what it names. */
function references(): { where: string; target: string; anchor?: string; section?: string }[] {
  const found: { where: string; target: string; anchor?: string; section?: string }[] = []
  const pattern = /((?:\.\.\/)*docs\/decisions\/[\w.-]+\.md)(#[\w-]+)?(?:(?:,\s*|\s*\()"([^"]+)")?/g
  for (const file of SCANNED.flatMap((entry) => [...scannedFiles(entry)])) {
    read(file).split('\n').forEach((line, i) => {
      for (const match of line.matchAll(pattern)) {
        const written = match[1]!
        const target = written.startsWith('../') ? path.resolve(path.dirname(file), written) : path.join(ROOT, written)
        found.push({ where: `${path.relative(ROOT, file)}:${i + 1}`, target, anchor: match[2]?.slice(1), section: match[3] })
      }
    })
  }
  return found
}

describe('docs/decisions', () => {
  it('keeps every heading of the old docs/decisions.md as a heading of some area file', () => {
    const present = new Set(decisionFiles().flatMap((name) => headings(read(path.join(DIR, name)))))
    const old = recorded().headings
    assert.ok(old.length > 30, `.headings lists only ${old.length} headings`)
    assert.deepEqual(old.filter((heading) => !present.has(heading)), [], 'old headings missing from docs/decisions/*.md')
  })

  it('holds at least as many words as the old single file', () => {
    const total = decisionFiles().reduce((sum, name) => sum + words(read(path.join(DIR, name))), 0)
    assert.ok(total >= recorded().words, `docs/decisions/*.md hold ${total} words; the old file held ${recorded().words}`)
  })

  it('links every area file from its README', () => {
    const index = read(path.join(DIR, 'README.md'))
    assert.ok(areaFiles().length >= 12, `only ${areaFiles().length} area files`)
    assert.deepEqual(areaFiles().filter((name) => !index.includes(`](${name})`)), [], 'area files not linked from README.md')
  })

  it('has only links that resolve, anchors included', () => {
    const broken: string[] = []
    for (const name of decisionFiles()) {
      const text = read(path.join(DIR, name))
      for (const [, link] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(link!)) continue
        const [file, anchor] = link!.split('#') as [string, string | undefined]
        const target = file === '' ? path.join(DIR, name) : path.resolve(DIR, file)
        if (!fs.existsSync(target)) broken.push(`${name}: ${link} (no such file)`)
        else if (anchor !== undefined && !anchors(read(target)).has(anchor)) broken.push(`${name}: ${link} (no such heading)`)
      }
    }
    assert.deepEqual(broken, [])
  })

  it('is referred to, from code and docs, by files and sections that exist', () => {
    const found = references()
    assert.ok(found.length > 20, `only ${found.length} references found: the scan is looking in the wrong place`)
    const broken = found.flatMap(({ where, target, anchor, section }) => {
      if (!fs.existsSync(target)) return [`${where}: ${path.relative(ROOT, target)} does not exist`]
      const text = read(target)
      if (anchor !== undefined && !anchors(text).has(anchor)) return [`${where}: no heading #${anchor} in ${path.relative(ROOT, target)}`]
      if (section !== undefined && !text.includes(section)) return [`${where}: "${section}" is not in ${path.relative(ROOT, target)}`]
      return []
    })
    assert.deepEqual(broken, [])
  })

  it('is no longer referred to as the single docs/decisions.md', () => {
    const self = fileURLToPath(import.meta.url)
    const stale = SCANNED.flatMap((entry) => [...scannedFiles(entry)])
      .filter((file) => file !== self && !file.startsWith(DIR + path.sep))
      .flatMap((file) => read(file).split('\n').flatMap((line, i) => (line.includes('docs/decisions.md') ? [`${path.relative(ROOT, file)}:${i + 1}`] : [])))
    assert.deepEqual(stale, [], 'references to the old single file: point them at docs/decisions/<area>.md')
  })
})
