/**
 * Whether this node is draining: set at the first moment of a SIGTERM, before anything stops, so /readyz
 * answers 503 while the listener is still open (Kubernetes takes the pod out of its Service on that answer;
 * a listener closed first answers nothing, which a probe cannot tell from a crash). One per process, passed
 * to whatever reports it: /readyz reads `draining`, and a gauge (perpetua_draining, perpetua_ready) follows
 * it through `onChange`.
 */
export class DrainState {
  private on = false
  private readonly listeners = new Set<(draining: boolean) => void>()

  get draining(): boolean {
    return this.on
  }

  /** The one switch: serve and worker turn it on when a stop begins. */
  setDraining(draining: boolean): void {
    if (draining === this.on) return
    this.on = draining
    for (const listener of this.listeners) listener(draining)
  }

  /** Calls `listener` with the current state now and with every change after; returns the unsubscribe. */
  onChange(listener: (draining: boolean) => void): () => void {
    this.listeners.add(listener)
    listener(this.on)
    return () => this.listeners.delete(listener)
  }
}

/**
 * The first half of a node's stop (serve.ts and worker.ts): draining on, then whatever takes work (the runner pool,
 * the job workers) stopped side by side, each handing its runs and jobs to the other nodes. One failing is logged
 * and the others go on: the rest of the stop must still happen.
 */
export async function drainAndHandOver(drain: DrainState, handOvers: readonly (() => Promise<unknown>)[], log: { error(obj: unknown, msg?: string): void }): Promise<void> {
  drain.setDraining(true)
  await Promise.all(handOvers.map((handOver) => handOver().catch((error: unknown) => log.error({ err: error }, 'handing work over failed'))))
}
