/**
 * An API message as the dashboard shows it: without the advice it gives API callers ("(GET
 * /v1/backtest/coverage tells it)", "reactivate it with PATCH /v1/webhooks/… first"), because the page
 * shows that answer or has the button itself. A parenthesis that cites a call goes; so does a clause
 * (after ";") that does. The API keeps its messages whole: the CLI and scripts read them too.
 */
const CALL = /\b(?:GET|POST|PUT|PATCH|DELETE) \/v1\b/

export function withoutApiAdvice(message: string): string {
  let text = message.replace(/\s*\([^()]*\)/g, (group) => (CALL.test(group) ? '' : group))
  text = text
    .split(/(?<=[.!?])\s+/)
    .map((sentence) =>
      sentence
        .split(/;\s+/)
        .filter((clause) => !CALL.test(clause))
        .join('; '),
    )
    .filter((sentence) => sentence.trim() !== '')
    .join(' ')
  return text.trim() || message
}

/** Whether `text` tells its reader to call the API (what a page never should). */
export function citesApi(text: string): boolean {
  return CALL.test(text)
}
