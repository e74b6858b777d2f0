import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { authenticateDataKey } from './auth/data-key.js'
import { templateRoutes } from './custom-templates/routes.js'
import { identityRoutes } from './auth/identity/routes.js'
import { BEARER_ONLY_MESSAGE } from './auth/keys/signed-in.js'
import { requireActivePlan } from './auth/plans.js'
import { backtestRoutes } from './backtests/routes.js'
import { BACKTEST_QUEUE } from './backtests/job-message.js'
import { templateCatalog } from './custom-templates/template-catalog.js'
import { insertInTransaction, sendInTransaction } from './db/queue.js'
import { sweepRoutes } from './sweeps/routes.js'
import { SWEEP_QUEUE, taskPriority } from './sweeps/task-message.js'
import { ENGINE_SEMANTICS } from './engine/index.js'
import { type Access, type OnAuthenticated, requireScope } from './http/access.js'
import { authenticate, replayedSignature } from './http/authenticate.js'
import { clientErrorHandler } from './http/client-error.js'
import { installErrorHandling, renderError } from './http/error-handler.js'
import { AppError } from './http/errors.js'
import { installJsonBody } from './http/json-body.js'
import { lazyChildLogger, levelEnabled } from './http/lazy-logger.js'
import { chargeWeight } from './http/rate-limit.js'
import { LazySerializers } from './http/lazy-serializers.js'
import { echoingRequestId, requestIdFrom, requestIdGenerator } from './http/request-id.js'
import { andThen, doneWhen } from './http/soon.js'
import { validatorCompiler } from './http/validator.js'
import { marketRoutes } from './market/routes.js'
import { installMetrics, type Metrics } from './ops/metrics.js'
import { opsRoutes } from './ops/routes.js'
import { swaggerOptions } from './openapi/swagger-options.js'
import type { Services } from './services.js'
import { publicStrategyRoutes } from './strategies/public-routes.js'
import { strategyRoutes } from './strategies/routes.js'
import { liveRoutes } from './live/routes.js'
import { symbolRules } from './backtests/upstream-history.js'
import { tradableSymbols } from './strategies/tradable-symbols.js'
import { webhookRoutes } from './webhooks/routes.js'
import { apiKeyRoutes } from './auth/keys/routes.js'
import { exchangeKeyRoutes } from './exchange-keys/routes.js'
import { dashboardRoutes } from './dashboard/routes.js'
import { tradingRoutes } from './trading/routes.js'

export const BODY_LIMIT_BYTES = 1024 * 1024

export interface BuildAppOptions {
  /** The process logger (pino); without one the app logs nothing, as in tests. */
  logger?: FastifyBaseLogger
  /** Compiles response serializers on first use (default: a new one); tests pass theirs to compile them all. */
  serializers?: LazySerializers
}

/** The whole HTTP API as a Fastify instance, ready for inject() or listen(); it never listens itself. */
const SIGNATURE_NEEDED =
  'this endpoint needs a signed request (X-Service-API-Key, X-Service-Timestamp, X-Service-Signature) or Authorization: Bearer <app token>'
const BEARER_NEEDED = BEARER_ONLY_MESSAGE

export async function buildApp(services: Services, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  let metrics: Metrics
  const nextRequestId = requestIdGenerator()
  const app = Fastify({
    ...(options.logger
      ? {
          loggerInstance: options.logger,
          childLoggerFactory: lazyChildLogger,
          // Fastify's "incoming request" / "request completed" lines are info: below that level each
          // request still paid for two calls that logged nothing (issue 13, GET /healthz).
          logController: new LogController({ disableRequestLogging: !levelEnabled(options.logger, 'info') }),
        }
      : { logger: false }),
    bodyLimit: BODY_LIMIT_BYTES,
    schemaController: { compilersFactory: { buildSerializer: (options.serializers ?? new LazySerializers()).build } },
    requestIdHeader: false, // genReqId reads the header itself and keeps it only when safe
    genReqId: requestIdFrom(nextRequestId),
    clientErrorHandler: clientErrorHandler(nextRequestId),
    return503OnClosing: true,
    frameworkErrors: (error, request, reply) => {
      const sent = renderError(error, request, reply)
      metrics.recordUnmatched(request, reply)
      return sent
    },
  })
  metrics = installMetrics(app)
  app.setValidatorCompiler(validatorCompiler)
  app.decorateRequest('principal', null)
  app.decorateRequest('rawBody', undefined)
  app.decorateRequest('addWeight', null)
  installJsonBody(app)
  installErrorHandling(app, metrics.recordUnmatched)

  // Every request pays for the hooks it runs (bench/http.ts: bare Fastify vs our /healthz), so there is
  // no global request hook: the access checks are attached only to the routes they guard, and the
  // request id is echoed by each route's handler (wrapped below) or by the error and 404 handlers.

  // A callback hook, as authoriseV1 below: the charge answers from memory on an embedded node.
  const chargeIp = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    doneWhen(chargeWeight(reply, budget(services, services.config.ipRequestsPerMinute), `ip:${request.ip}`, 1, false), done)
  }

  // After body parsing (signatures cover the raw body), before validation (401 comes before 400).
  const authoriseData = (access: Extract<Access, { kind: 'data' }>) => async (request: FastifyRequest, reply: FastifyReply) => {
    const principal = await authenticateDataKey(request, services, access.scope)
    request.principal = principal
    await chargeWeight(reply, budget(services, services.config.weightPerMinute), principal.keyId, access.weight, true)
  }
  // A callback hook, finished at once when every step answers from memory (embedded: a cached key, the
  // in-process replay guard), so a signed request pays no promise turns for them (http/soon.ts, issue 36).
  const authoriseV1 = (access: Extract<Access, { kind: 'v1' }>, onAuthenticated: OnAuthenticated | undefined) => (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const admitted = andThen(authenticate(request, services), (authenticated) => {
      const principal = authenticated?.principal ?? null
      if (!principal && access.signed) throw new AppError('UNAUTHENTICATED', access.bearerOnly ? BEARER_NEEDED : SIGNATURE_NEEDED)
      if (principal && access.scope) requireScope(principal, access.scope)
      request.principal = principal
      if (principal && onAuthenticated) onAuthenticated(request, principal)
      const bucket = principal ? (principal.keyId ?? `user:${principal.userId}`) : `ip:${request.ip}`
      const replay = authenticated?.replay
      const weights = budget(services, services.config.weightPerMinute)
      request.addWeight = (weight) => chargeWeight(reply, weights, bucket, weight, true)
      return chargeWeight(reply, weights, bucket, access.weight, true, replay && { claim: replay, refused: replayedSignature })
    })
    doneWhen(admitted, done)
  }

  // The plan is checked after validation: a bad parameter is 400 whatever the plan (docs/decisions/auth.md, "Sign-in and plans").
  const requirePlan = async (request: FastifyRequest) => {
    if (!request.principal) throw new AppError('UNAUTHENTICATED', 'this endpoint needs your data key (pk_…) in the X-Service-API-Key header')
    await requireActivePlan(services.database.db, request.principal.userId, services.now())
  }
  app.addHook('onRoute', (route) => {
    route.handler = echoingRequestId(route.handler)
    const config = route.config as { access?: Access; onAuthenticated?: OnAuthenticated } | undefined
    const access = config?.access
    if (access?.kind === 'public') route.onRequest = [chargeIp, ...hooksOf(route.onRequest)]
    if (access?.kind === 'v1') route.preValidation = [authoriseV1(access, config?.onAuthenticated), ...hooksOf(route.preValidation)]
    if (access?.kind === 'data') {
      route.preValidation = [authoriseData(access), ...hooksOf(route.preValidation)]
      route.preHandler = [requirePlan, ...hooksOf(route.preHandler)]
    }
  })

  await app.register(swagger, swaggerOptions())
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } })
  app.get('/openapi.json', { config: { access: { kind: 'ops' } }, schema: { hide: true } }, async () => app.swagger())

  await app.register(opsRoutes, { db: services.database.db, metricsToken: services.config.metricsToken, drain: services.drain })
  await app.register(publicStrategyRoutes, { db: services.database.db })
  await app.register(identityRoutes, { db: services.database.db, tokens: services.tokens, now: services.now, providers: services.config })
  const templates = templateCatalog(services.database.db, services.sandbox)
  const tradable = tradableSymbols(services.market)
  await app.register(strategyRoutes, {
    db: services.database.db,
    now: services.now,
    cache: services.strategyCache,
    reads: services.strategyReads,
    templates,
    live: {
      secrets: services.secrets,
      upstream: services.market.client,
      rules: (symbol) => symbolRules(services.market, symbol),
      tradable,
      onRunsChanged: () => services.runSignals.emit('runs-changed'),
      feed: services.strategyFeed,
      templates,
    },
  })
  await app.register(liveRoutes, {
    db: services.database.db,
    now: services.now,
    secrets: services.secrets,
    shared: services.shared,
    feed: services.strategyFeed,
    keys: services.keys,
    rules: (symbol) => symbolRules(services.market, symbol),
    upstream: services.market.client,
  })
  app.addHook('onClose', () => services.strategyFeed.close())
  await app.register(templateRoutes, { db: services.database.db, now: services.now, sandbox: services.sandbox })
  await app.register(backtestRoutes, {
    db: services.database.db,
    now: services.now,
    market: services.market,
    shared: services.shared,
    templates,
    semantics: ENGINE_SEMANTICS,
    tradable,
    enqueue: async (trx, run, priority) => {
      if (!services.boss) throw new AppError('SERVICE_UNAVAILABLE', 'the job queue is not running on this node')
      await sendInTransaction(services.boss, trx, BACKTEST_QUEUE, run, priority)
    },
  })
  await app.register(sweepRoutes, {
    db: services.database.db,
    now: services.now,
    market: services.market,
    shared: services.shared,
    templates,
    tradable,
    enqueue: async (trx, tasks) => {
      if (!services.boss) throw new AppError('SERVICE_UNAVAILABLE', 'the job queue is not running on this node')
      await insertInTransaction(services.boss, trx, SWEEP_QUEUE, tasks, taskPriority)
    },
  })
  await app.register(marketRoutes, { market: services.market, now: services.now })
  await app.register(webhookRoutes, {
    db: services.database.db,
    now: services.now,
    secrets: services.secrets,
    allowPrivateHosts: services.config.webhookAllowPrivateHosts,
    pipeline: services.webhooks,
  })
  await app.register(apiKeyRoutes, { db: services.database.db, box: services.secrets, keys: services.keys, now: services.now })
  await app.register(exchangeKeyRoutes, {
    db: services.database.db,
    box: services.secrets,
    upstream: services.market.client,
    shared: services.shared,
    now: services.now,
  })
  await app.register(tradingRoutes, { upstream: services.market.client, now: services.now })
  await app.register(dashboardRoutes, { dir: services.config.dashboardDir })
  return app
}

/** A route's own hooks of one kind as a list (Fastify takes one function or an array). */
function hooksOf<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : [hooks].flat() as T[]
}

function budget(services: Services, limit: number) {
  return { limit, shared: services.shared, now: services.now }
}
