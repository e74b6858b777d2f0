/**
 * The most of a module's own text (an error's name or message, a validate() refusal, a param's name)
 * that is copied out of the sandbox. Issue 37: a 150-byte upload whose module threw
 * `new Error("E".repeat(2e7))` got a 20 MB 400; the same text would have gone into job errors, a run's
 * last_error, webhooks and sweep errors. About 1 KiB is more than any useful message.
 */
export const GUEST_TEXT_MAX = 1024

const TRUNCATED = '…(truncated)'

/**
 * `text` cut to GUEST_TEXT_MAX UTF-16 units, saying so, never splitting a surrogate pair. Applied once,
 * where the text leaves the guest (strategy-instance.ts, inspect-module.ts): every copy after it is bounded.
 */
export function guestText(text: string): string {
  if (text.length <= GUEST_TEXT_MAX) return text
  const end = isHighSurrogate(text.charCodeAt(GUEST_TEXT_MAX - 1)) ? GUEST_TEXT_MAX - 1 : GUEST_TEXT_MAX
  return `${text.slice(0, end)}${TRUNCATED}`
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff
}
