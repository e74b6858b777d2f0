import { api } from './endpoints.js'
import type { StreamMessage } from './types.js'

export type StreamState = 'connecting' | 'open' | 'reconnecting' | 'closed'

/**
 * Follows GET /v1/strategies/{id}/stream. Browsers cannot set headers on a WebSocket, so each
 * connection takes a one-time ticket (POST …/stream-ticket, valid 30 s) and passes it as ?ticket=.
 * The stream is a live view without replay (docs/decisions.md): after a reconnect the first message
 * is the current status again, and `onReconnect` lets the page reload what it may have missed.
 */
export function followStrategy(
  strategyId: string,
  handlers: { message: (message: StreamMessage) => void; state: (state: StreamState, detail?: string) => void; reconnected?: () => void },
): () => void {
  let stopped = false
  let socket: WebSocket | undefined
  let failures = 0
  let timer: ReturnType<typeof setTimeout> | undefined

  const connect = async (): Promise<void> => {
    handlers.state(failures === 0 ? 'connecting' : 'reconnecting')
    let ticket: string
    try {
      ticket = (await api.streamTicket(strategyId)).ticket
    } catch (error) {
      return retry(error instanceof Error ? error.message : String(error))
    }
    if (stopped) return
    const origin = location.origin.replace(/^http/, 'ws')
    const ws = new WebSocket(`${origin}/v1/strategies/${encodeURIComponent(strategyId)}/stream?ticket=${encodeURIComponent(ticket)}`)
    socket = ws
    let opened = false
    ws.onopen = () => {
      opened = true
      if (failures > 0) handlers.reconnected?.()
      failures = 0
      handlers.state('open')
    }
    ws.onmessage = (event) => {
      try {
        handlers.message(JSON.parse(String(event.data)) as StreamMessage)
      } catch {
        // A message that is not JSON is not ours; the stream carries on.
      }
    }
    ws.onclose = () => {
      if (socket === ws) socket = undefined
      if (!stopped) retry(opened ? 'the stream closed' : 'the stream refused the connection')
    }
  }

  const retry = (detail: string): void => {
    if (stopped) return
    failures++
    const delay = Math.min(30_000, 500 * 2 ** Math.min(failures - 1, 6))
    handlers.state('reconnecting', `${detail}; again in ${Math.round(delay / 1000)} s`)
    timer = setTimeout(() => void connect(), delay)
  }

  void connect()
  return () => {
    stopped = true
    clearTimeout(timer)
    socket?.close()
    handlers.state('closed')
  }
}
