// Module hooks (they run on Node's hooks thread): append each resolved URL to the file.
import fs from 'node:fs'

let file

export function initialize(data) {
  file = data?.file
}

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  if (file) fs.appendFileSync(file, `${resolved.url}\n`)
  return resolved
}
