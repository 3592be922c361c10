// What a validating proxy in front of the service (Prism, say) does with a request: hold its body to the
// schema the served OpenAPI document gives it. Ajv stands in for the proxy.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'

/** A check of a body against the document's schema of the JSON request body of `method` `path`. */
export function requestBodyValidator(document: object, path: string, method: string): ValidateFunction {
  const ajv = new Ajv2020({ strict: false, validateSchema: false, validateFormats: false })
  ajv.addSchema(document, 'openapi.json')
  const pointer = ['paths', path, method, 'requestBody', 'content', 'application/json', 'schema']
    .map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1'))
    .join('/')
  return ajv.compile({ $ref: `openapi.json#/${pointer}` })
}
