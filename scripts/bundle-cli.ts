/**
 * Bundles the `perpetua` command (src/cli.ts and everything it imports) into dist/cli.js plus chunks
 * beside it, over the file tsc wrote there; `npm run build` runs this after tsc. Why: loading the
 * server as ~280 files of ours and ~600 of node_modules cost ~680 ms of CPU per start (resolving,
 * reading and compiling each module); the bundle loads in ~160 ms (docs/decisions/performance.md, "Speed and footprint (issue 13)").
 *
 * - Each dynamic import stays a separate chunk (splitting), so client commands still load neither
 *   Fastify nor pg (`clientCommandInputs` is what the test checks).
 * - Packages that read files beside their own code at run time (WASM, static assets, package.json,
 *   transport workers) or load optional native modules stay external, loaded from node_modules.
 * - Our code finds files relative to itself (`new URL('./pglite-worker.js', import.meta.url)`,
 *   migrations, the template database, the dashboard, the recorded data). Each file's
 *   `import.meta.url` is rewritten to the URL of the file tsc wrote for it, so those paths resolve
 *   exactly as they do unbundled; worker threads and forked processes run tsc's output.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const SRC = path.join(ROOT, 'src')
const ENTRY = path.join(SRC, 'cli.ts')
const CHUNK_PREFIX = 'cli-chunk-'

const EXTERNAL = [
  '@electric-sql/pglite', // WASM and data files beside its code
  '@fastify/swagger', // reads its package.json through __dirname
  '@fastify/swagger-ui', // serves its static folder through __dirname
  'pino', // transports run files of its own in worker threads
  'ioredis', // reads its package.json through __dirname; loaded only with REDIS_URL
  'pg-native', // optional native modules, loaded when installed
  'bufferutil',
  'utf-8-validate',
]

/** The packages a client command must never load (test/cli/client-commands.test.ts checks the same unbundled). */
export const SERVER_ONLY_PACKAGES = ['fastify', 'pg', 'kysely', 'pino', 'pg-boss', '@electric-sql/pglite']

/** Builds the bundle into memory; `outDir` is where it will be written (the import.meta.url rewrite depends on it). */
export function bundleCli(outDir: string): Promise<esbuild.BuildResult<{ write: false; metafile: true }>> {
  return esbuild.build({
    entryPoints: { cli: ENTRY },
    outdir: outDir,
    chunkNames: `${CHUNK_PREFIX}[hash]`,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'bundle',
    external: EXTERNAL,
    // Bundled CommonJS packages call require(): give the ESM chunks one.
    banner: { js: "import { createRequire as __perpetuaCreateRequire } from 'node:module'; const require = __perpetuaCreateRequire(import.meta.url);" },
    sourcemap: 'linked',
    metafile: true,
    write: false,
    logLevel: 'warning',
    plugins: [importMetaUrlOfTscOutput(outDir)],
  })
}

function importMetaUrlOfTscOutput(outDir: string): esbuild.Plugin {
  return {
    name: 'import-meta-url-of-tsc-output',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (!args.path.startsWith(SRC + path.sep)) return undefined
        const source = await fs.promises.readFile(args.path, 'utf8')
        if (!source.includes('import.meta.url')) return { contents: source, loader: 'ts' }
        const tscOutput = path.join(outDir, path.relative(SRC, args.path)).replace(/\.ts$/, '.js')
        const relative = `./${path.relative(outDir, tscOutput).split(path.sep).join('/')}`
        const url = `new URL(${JSON.stringify(relative)}, import.meta.url).href`
        return { contents: source.replaceAll('import.meta.url', url), loader: 'ts' }
      })
    },
  }
}

/**
 * Every input a client command loads: the entry's chunk and the client-program chunk with their static
 * imports (dynamic imports are what `serve` and the other operator commands load on demand).
 */
export function clientCommandInputs(metafile: esbuild.Metafile, outDir: string): string[] {
  const outputs = metafile.outputs
  const key = (file: string) => path.relative(ROOT, path.resolve(ROOT, file))
  const byKey = new Map(Object.entries(outputs).map(([file, output]) => [key(file), output]))
  const entry = [...byKey].find(([, output]) => output.entryPoint !== undefined && key(output.entryPoint) === key(ENTRY))
  const clientProgram = [...byKey].find(([, output]) => Object.keys(output.inputs).some((input) => key(input) === 'src/cli/client-program.ts'))
  if (!entry || !clientProgram) throw new Error(`the bundle in ${outDir} has no entry or no client-program chunk`)
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const imported of byKey.get(file)?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) visit(key(imported.path))
    }
  }
  visit(entry[0])
  visit(clientProgram[0])
  const inputs = new Set<string>()
  for (const file of seen) for (const input of Object.keys(byKey.get(file)?.inputs ?? {})) inputs.add(input)
  for (const file of seen) for (const imported of byKey.get(file)?.imports ?? []) if (imported.external) inputs.add(`node_modules/${imported.path}`)
  return [...inputs].sort()
}

/** Writes the bundle into `outDir`, replacing tsc's cli.js and any chunks of an earlier bundle. */
export async function writeCliBundle(outDir: string): Promise<{ files: number; bytes: number }> {
  const result = await bundleCli(outDir)
  const leaked = clientCommandInputs(result.metafile, outDir).filter((input) => SERVER_ONLY_PACKAGES.some((name) => input.includes(`node_modules/${name}/`) || input === `node_modules/${name}`))
  if (leaked.length > 0) throw new Error(`client commands would load server packages: ${leaked.join(', ')}`)
  for (const name of fs.readdirSync(outDir)) if (name.startsWith(CHUNK_PREFIX)) fs.rmSync(path.join(outDir, name))
  let bytes = 0
  for (const file of result.outputFiles) {
    fs.writeFileSync(file.path, file.contents)
    bytes += file.contents.byteLength
  }
  fs.chmodSync(path.join(outDir, 'cli.js'), 0o755)
  return { files: result.outputFiles.length, bytes }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = path.resolve(process.argv[2] ?? 'dist')
  const started = performance.now()
  const { files, bytes } = await writeCliBundle(outDir)
  console.log(`cli bundle: ${files} files, ${(bytes / 1e6).toFixed(1)} MB in ${path.relative(process.cwd(), outDir) || '.'} (${Math.round(performance.now() - started)} ms)`)
}
