/**
 * The operationId of a route, derived from its method and path so that it never changes between
 * builds and never collides: `GET /v1/backtest/jobs/{id}` → `getV1BacktestJobsById`,
 * `POST /v1/strategies/{id}/deploy` → `postV1StrategiesByIdDeploy`. Generators name their methods
 * after it, so renaming a route is the only thing that renames its operation.
 */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const parameter = /^\{(\w+)\}$/.exec(segment) ?? /^:(\w+)$/.exec(segment)
      return parameter ? `By${capitalise(camel(parameter[1]!))}` : capitalise(camel(segment))
    })
  return method.toLowerCase() + words.join('')
}

function camel(text: string): string {
  return text.replace(/[^A-Za-z0-9]+([A-Za-z0-9])/g, (_, next: string) => next.toUpperCase()).replace(/[^A-Za-z0-9]/g, '')
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
