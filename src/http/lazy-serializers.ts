// Response serializers compiled at a route's first answer, not at start: compiling every route's
// response schemas was the largest single part of the service's start (docs/benchmarks/start-time.md).
// The compiler is Fastify's own default; only the moment it runs changes.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

type Factory = ReturnType<typeof SerializerSelector>

/** A `schemaController.compilersFactory.buildSerializer` for Fastify that defers each compilation. */
export function lazySerializers(): Factory {
  const build = SerializerSelector()
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options)
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined
      return (doc) => {
        serialize ??= compile(route)
        return serialize(doc)
      }
    }
  }
}
