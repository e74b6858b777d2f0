import type { FastifyReply } from 'fastify'

/** Sends JSON text we already hold (a cached rendering, an upstream body) without serializing it again. */
export function sendJsonText(reply: FastifyReply, text: string | Buffer, status = 200): FastifyReply {
  return reply.code(status).type('application/json').send(text)
}
