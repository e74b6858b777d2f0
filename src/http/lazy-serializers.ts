import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

type BuildSerializer = ReturnType<typeof SerializerSelector>
type RouteDefinition = Parameters<ReturnType<BuildSerializer>>[0]

/**
 * Fastify's own response serializers (fast-json-stringify, the default it would build), each compiled
 * when its route first answers with that status instead of at ready: compiling every response schema
 * of every route was the largest part of `listen` in a warm `npm start` (271 ms of 1.45 s of the main
 * thread, profiled at load 8), for routes a process may never serve. Pass `build` as Fastify's
 * `schemaController.compilersFactory.buildSerializer`.
 *
 * A schema fast-json-stringify cannot compile would surface at its first response rather than at
 * start; `compileAll` compiles what is still pending, so a test can fail on it instead.
 */
export class LazySerializers {
  private readonly pending = new Map<RouteDefinition, () => unknown>()
  private readonly selector = SerializerSelector()

  readonly build: BuildSerializer = (externalSchemas, serializerOpts) => {
    const compile = this.selector(externalSchemas, serializerOpts)
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined
      const compileOnce = () => {
        if (!serialize) {
          try {
            serialize = compile(route)
          } catch (error) {
            const { contentType } = route as { contentType?: string } // passed by Fastify, missing from the type
            const where = `${route.method} ${route.url} ${route.httpStatus}${contentType ? ` ${contentType}` : ''}`
            throw new Error(`the response schema of ${where} does not compile: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
          }
          this.pending.delete(route)
        }
        return serialize
      }
      this.pending.set(route, compileOnce)
      return (doc: unknown) => (serialize ?? compileOnce())(doc)
    }
  }

  /** Serializers built so far that no response has compiled yet. */
  get pendingCount(): number {
    return this.pending.size
  }

  /** Compiles every pending serializer (throws on the first that fails); returns how many it compiled. */
  compileAll(): number {
    const compiles = [...this.pending.values()]
    for (const compile of compiles) compile()
    return compiles.length
  }
}
