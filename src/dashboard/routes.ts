import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { DASHBOARD_PATH } from './address.js'
import { BUILT_DASHBOARD_DIR, type DashboardFile, loadDashboard } from './files.js'

export interface DashboardRoutesOptions {
  /** The built dashboard (index.html + assets/); default: the package's dist/web. */
  dir: string | undefined
}

/**
 * The page holds an API secret in memory, so it loads nothing from elsewhere and runs no inline
 * script: scripts, styles and connections (fetch, and the stream's WebSocket: CSP3 'self' covers
 * ws/wss of this host) only from this origin; never framed. Styles allow 'unsafe-inline': the chart
 * library writes style attributes (Chromium refused them under style-src 'self', and the charts
 * drew empty); styles cannot run code. Its attribution logo is an SVG data URL (img-src data:).
 */
const CSP =
  "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"

const config = { access: { kind: 'ops' as const } }
const schema = { hide: true }

/**
 * GET / → /app/, and the single-page app under /app/: hashed assets cached for a year, any other
 * path below /app/ answers index.html (the app routes in the browser), so deep links work.
 */
export const dashboardRoutes: FastifyPluginAsync<DashboardRoutesOptions> = async (app, options) => {
  const files = loadDashboard(options.dir ?? BUILT_DASHBOARD_DIR)

  app.get('/', { config, schema }, async (_request, reply) => reply.redirect(DASHBOARD_PATH, 302))
  app.get(DASHBOARD_PATH.slice(0, -1), { config, schema }, async (_request, reply) => reply.redirect(DASHBOARD_PATH, 301))
  app.get(`${DASHBOARD_PATH}*`, { config, schema }, async (request, reply) => {
    if (!files) {
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The dashboard is not built: run `npm run build` (npm ci runs it) and restart the server.')
    }
    const rest = (request.params as { '*': string })['*']
    if (rest.startsWith('assets/')) {
      const file = files.get(rest)
      if (!file) return reply.code(404).type('text/plain; charset=utf-8').send('no such dashboard file')
      reply.header('cache-control', 'public, max-age=31536000, immutable')
      return send(request, reply, file)
    }
    reply.header('cache-control', 'no-cache')
    reply.header('content-security-policy', CSP)
    reply.header('x-content-type-options', 'nosniff')
    reply.header('referrer-policy', 'no-referrer')
    return send(request, reply, files.get('index.html')!)
  })
}

function send(request: FastifyRequest, reply: FastifyReply, file: DashboardFile): FastifyReply {
  reply.type(file.contentType)
  reply.header('vary', 'accept-encoding')
  const gzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? '')) ? file.gzip() : undefined
  if (gzip) {
    reply.header('content-encoding', 'gzip')
    return reply.send(gzip)
  }
  return reply.send(file.body)
}
