import type { FastifyReply } from 'fastify'
import { andThen, type Soon } from '../http/soon.js'

/** Sends JSON text we already hold (a cached rendering, an upstream body) without serializing it again. */
export function sendJsonText(reply: FastifyReply, text: string | Buffer, status = 200): FastifyReply {
  return reply.code(status).type('application/json').send(text)
}

/**
 * Sends JSON text at once when it is at hand (a cached rendering: http/soon.ts), else once it comes. A
 * handler returns this: nothing when sent at once (Fastify then leaves the reply alone), so a cached read
 * pays no promise for its handler.
 */
export function sendJsonTextSoon(reply: FastifyReply, text: Soon<string | Buffer>): Soon<void> {
  return andThen(text, (json) => {
    sendJsonText(reply, json)
  })
}
