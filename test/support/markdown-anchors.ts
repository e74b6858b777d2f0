/** Heading texts of a markdown file, any level, outside code fences. */
export function headings(text: string): string[] {
  const found: string[] = []
  let fenced = false
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const match = fenced ? null : /^#{1,6} (.+?)\s*$/.exec(line)
    if (match) found.push(match[1]!)
  }
  return found
}

/** GitHub's anchors for a file's headings: lower case, punctuation dropped, spaces as dashes, repeats numbered. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const heading of headings(text)) {
    const base = heading.toLowerCase().replace(/[^\p{L}\p{M}\p{N}_\- ]/gu, '').replace(/ /g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}
