import type { components, paths } from './generated/openapi.js'

/**
 * Types that turn the generated `paths` (openapi-typescript, from the app's own document) into what a
 * call takes and returns. Nothing here is written per endpoint: a route added to the server appears
 * here at the next build.
 */
export type { components, operations, paths } from './generated/openapi.js'

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete'
export type Path = keyof paths

/** The operation object of a method on a path (never when the path has no such method). */
export type Operation<P extends Path, M extends Method> = NonNullable<paths[P][M]>

/** Paths that have this method. */
export type PathsWith<M extends Method> = { [P in Path]: [Operation<P, M>] extends [never] ? never : P }[Path]

type Parameters<O> = O extends { parameters: infer X } ? X : never
type Part<O, K extends string> = Parameters<O> extends Partial<Record<K, infer X>> ? X : never
type Present<T> = [NonNullable<T>] extends [never] ? false : true

/** Path parameters of an operation, e.g. `{ id: string }`. */
export type PathParams<O> = NonNullable<Part<O, 'path'>>
/** Query parameters of an operation. */
export type QueryParams<O> = NonNullable<Part<O, 'query'>>
/** The JSON request body of an operation. */
export type RequestBody<O> = O extends { requestBody?: infer R }
  ? [NonNullable<R>] extends [never]
    ? never
    : NonNullable<R> extends { content: { 'application/json': infer B } }
      ? B
      : never
  : never

type ContentOf<R> = R extends { content: { 'application/json': infer J } } ? J : R extends { content: { 'text/plain': infer T } } ? T : undefined
/** What a successful call answers (the 200, 201 or 202 body, or undefined for 204). */
export type SuccessBody<O> = O extends { responses: infer R }
  ? 200 extends keyof R
    ? ContentOf<R[200]>
    : 201 extends keyof R
      ? ContentOf<R[201]>
      : 202 extends keyof R
        ? ContentOf<R[202]>
        : 204 extends keyof R
          ? undefined
          : unknown
  : never

/** Everything a call can carry besides method and path; each part required exactly when the operation requires it. */
export type CallOptions<O> = (Present<PathParams<O>> extends true ? { path: PathParams<O> } : { path?: undefined }) &
  (Present<QueryParams<O>> extends true
    ? {} extends Pick<Parameters<O>, 'query' & keyof Parameters<O>>
      ? { query?: QueryParams<O> }
      : { query: QueryParams<O> }
    : { query?: undefined }) &
  (Present<RequestBody<O>> extends true ? { body: RequestBody<O> } : { body?: undefined }) & {
    /** Aborts the request. */
    signal?: AbortSignal
    /** Extra request headers. */
    headers?: Record<string, string>
  }

/** The options argument, optional when nothing in it is required. */
export type CallArgs<O> = {} extends CallOptions<O> ? [options?: CallOptions<O>] : [options: CallOptions<O>]

type Schemas = components['schemas']
/** The closed set of /v1 error codes. */
export type ErrorCode = Schemas['ErrorEnvelope']['error']['code']

// Named resources, as the operations that return them declare them.
type Ok<P extends Path, M extends Method> = SuccessBody<Operation<P, M>>
export type BacktestJob = Ok<'/v1/backtest/jobs/{id}', 'get'>
export type BacktestCoverage = Ok<'/v1/backtest/coverage', 'get'>
export type BacktestJobSummary = Ok<'/v1/backtest/jobs', 'get'>['data'][number]
export type BacktestRequest = RequestBody<Operation<'/v1/backtest/jobs', 'post'>>
export type BacktestStatus = BacktestJob['status']
export type Sweep = Ok<'/v1/backtest/sweeps/{id}', 'get'>
export type SweepRequest = RequestBody<Operation<'/v1/backtest/sweeps', 'post'>>
export type SweepRun = Ok<'/v1/backtest/sweeps/{id}/runs', 'get'>['data'][number]
/** GET …/returns as JSON: N run ids, T dates, T rows of N daily returns. */
export type SweepReturns = Extract<Ok<'/v1/backtest/sweeps/{id}/returns', 'get'>, { run_ids: string[] }>
export type Strategy = Ok<'/v1/strategies/{id}', 'get'>
export type StrategyCreate = RequestBody<Operation<'/v1/strategies', 'post'>>
export type StrategyUpdate = RequestBody<Operation<'/v1/strategies/{id}', 'patch'>>
export type DeployOptions = RequestBody<Operation<'/v1/strategies/{id}/deploy', 'post'>>
export type StrategyOrder = Ok<'/v1/strategies/{id}/orders', 'get'>['data'][number]
export type StrategyTrade = Ok<'/v1/strategies/{id}/trades', 'get'>['data'][number]
export type StrategyPosition = Ok<'/v1/strategies/{id}/positions', 'get'>[number]
export type StreamMessage = Ok<'/v1/strategies/{id}/stream', 'get'>
export type Webhook = Ok<'/v1/webhooks/{id}', 'get'>
export type CreatedWebhook = Ok<'/v1/webhooks', 'post'>
export type WebhookCreate = RequestBody<Operation<'/v1/webhooks', 'post'>>
export type WebhookUpdate = RequestBody<Operation<'/v1/webhooks/{id}', 'patch'>>
export type WebhookTestResult = Ok<'/v1/webhooks/{id}/test', 'post'>
export type WebhookDelivery = Ok<'/v1/webhooks/{id}/deliveries', 'get'>['data'][number]
/** A listed template: a built-in (`custom: false`) or one of yours (`custom: true`). */
export type Template = Ok<'/v1/templates', 'get'>['data'][number]
export type BuiltInTemplate = Extract<Template, { custom: false }>
/** One of your templates at one version, as uploading answers it. */
export type CustomTemplate = Ok<'/v1/templates', 'post'>
/** GET /v1/templates/{id}: a built-in, or one of yours with its source and versions. */
export type TemplateDetail = Ok<'/v1/templates/{id}', 'get'>
export type CustomTemplateCreate = RequestBody<Operation<'/v1/templates', 'post'>>
export type CustomTemplateUpdate = RequestBody<Operation<'/v1/templates/{id}', 'put'>>
export type ExchangeInfo = Ok<'/v1/market/exchange-info', 'get'>
export type PublicTrade = Ok<'/v1/market/trades', 'get'>[number]
