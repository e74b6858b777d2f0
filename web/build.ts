/**
 * Builds the dashboard (web/src) into one folder: index.html plus content-hashed assets, everything it
 * loads included (no CDN, nothing fetched at run time). Code split: the template editor's CodeMirror
 * (440 kB minified, 150 kB gzipped: more than the rest of the app) is a chunk that only the editor
 * page imports, so every other page loads what it did before. `npm run build` runs it into dist/web; the
 * browser tests run it into a temporary folder. esbuild, not Vite: it is already in the tree (tsx
 * uses it), bundles TSX and CSS in ~0.3 s on this machine, and the dashboard needs no dev server plugins.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'
import { DASHBOARD_PATH } from '../src/dashboard/address.js'


const WEB_DIR = path.dirname(fileURLToPath(import.meta.url))
const EXAMPLES_DIR = path.join(WEB_DIR, '../examples/strategies')

/**
 * `import source from 'example:sma-cross'` is the text of examples/strategies/sma-cross.js: the template
 * editor starts a new template from the example the test suite runs, rather than from a copy that
 * could stop working unnoticed. A plugin because TypeScript cannot type a text import of a relative
 * .js path (web/src/examples.d.ts types the `example:` names).
 */
const examplesPlugin: esbuild.Plugin = {
  name: 'perpetua-examples',
  setup(build) {
    build.onResolve({ filter: /^example:/ }, (args) => ({ path: path.join(EXAMPLES_DIR, `${args.path.slice('example:'.length)}.js`), namespace: 'example' }))
    build.onLoad({ filter: /.*/, namespace: 'example' }, async (args) => ({ contents: await fs.readFile(args.path, 'utf8'), loader: 'text', watchFiles: [args.path] }))
  },
}

/** Bundles the app into `outDir` (emptied first); returns the files written, relative to it. */
export async function buildDashboard(outDir: string): Promise<string[]> {
  await fs.rm(outDir, { recursive: true, force: true })
  const result = await esbuild.build({
    entryPoints: { app: path.join(WEB_DIR, 'src/main.tsx') },
    outdir: path.join(outDir, 'assets'),
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    splitting: true,
    minify: true,
    sourcemap: 'linked',
    target: ['chrome109', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    metafile: true,
    legalComments: 'linked',
    logLevel: 'warning',
    plugins: [examplesPlugin],
  })
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.relative(outDir, path.resolve(file)))
  const entry = Object.entries(result.metafile.outputs).find(([, output]) => output.entryPoint !== undefined)
  const script = entry && path.relative(outDir, path.resolve(entry[0]))
  const style = entry?.[1].cssBundle && path.relative(outDir, path.resolve(entry[1].cssBundle))
  if (!script || !style) throw new Error(`the dashboard build made no script or no stylesheet: ${outputs.join(', ')}`)
  const html = (await fs.readFile(path.join(WEB_DIR, 'index.html'), 'utf8'))
    .replace('%STYLE%', DASHBOARD_PATH + style)
    .replace('%SCRIPT%', DASHBOARD_PATH + script)
  await fs.writeFile(path.join(outDir, 'index.html'), html)
  return ['index.html', ...outputs].sort()
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = path.resolve(process.argv[2] ?? 'dist/web')
  const started = performance.now()
  const files = await buildDashboard(outDir)
  console.log(`dashboard: ${files.length} files in ${path.relative(process.cwd(), outDir) || '.'} (${Math.round(performance.now() - started)} ms)`)
}
