const DAY_MS = 86_400_000
const dayMs = (day: string) => Date.parse(`${day}T00:00:00Z`)
const plusDays = (day: string, n: number) => new Date(dayMs(day) + n * DAY_MS).toISOString().slice(0, 10)

/**
 * Dates outside the recorded range moved inside it, keeping their length (the recorded range's at most):
 * offering the whole range instead offered years more than asked, and past the API's five-year limit
 * for a symbol recorded longer (BTCUSDT's hours: 2019 to 2025), so that fit was refused.
 */
export function moveInside(common: { start: string; end: string }, start: string, end: string): { start: string; end: string } {
  const days = Math.max(0, Math.min(Math.round((dayMs(end) - dayMs(start)) / DAY_MS), Math.round((dayMs(common.end) - dayMs(common.start)) / DAY_MS)))
  return end < common.start ? { start: common.start, end: plusDays(common.start, days) } : { start: plusDays(common.end, -days), end: common.end }
}
