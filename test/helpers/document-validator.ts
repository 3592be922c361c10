// What a validating proxy in front of the service (Prism, say) does with a request: hold its body to the
// schema the served OpenAPI document gives it. Ajv stands in for the proxy.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'

/** A check of a body against the document's schema of the JSON request body of `method` `path`. */
export function requestBodyValidator(document: object, path: string, method: string): ValidateFunction {
  const ajv = new Ajv2020({ strict: false, validateSchema: false, validateFormats: false })
  ajv.addSchema(withoutExamples(document) as object, 'openapi.json')
  const pointer = ['paths', path, method, 'requestBody', 'content', 'application/json', 'schema']
    .map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1'))
    .join('/')
  return ajv.compile({ $ref: `openapi.json#/${pointer}` })
}

/**
 * The document without its examples: a proxy reads schemas only, while Ajv takes every `$id` it meets as
 * a schema's, and an example of GET /algorithms/{name} shows a module's schema, `$id` and all.
 */
function withoutExamples(value: unknown, inProperties = false): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutExamples(item))
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      // A member of `properties` may be called examples: it is a schema, kept.
      .filter(([key]) => inProperties || (key !== 'example' && key !== 'examples'))
      .map(([key, member]) => [key, withoutExamples(member, key === 'properties')]),
  )
}
