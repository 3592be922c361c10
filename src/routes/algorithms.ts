// The algorithms the service serves: GET /algorithms lists them, GET /algorithms/{name} shows one with
// its schemas, and POST /algorithms/{name}/invoke calls one synchronously, answered as /invoke is. Each
// algorithm has its own invoke route, so that the OpenAPI document shows its params and result; an
// unknown name reaches the parametric route, which answers 404. After a reload (algorithms/reload.ts) each
// route calls its name's default of the moment, and a name the reload added is called through the
// parametric route.
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify'
import { stringify } from 'lossless-json'
import type { Algorithm, ParamLimits } from '../algorithms/algorithm.js'
import { readParams } from '../algorithms/params.js'
import type { Registry } from '../algorithms/registry.js'
import { type BoundSettings, shownBounds } from '../algorithms/request-bounds.js'
import { AlgorithmNotFoundError } from '../errors.js'
import type { Executor } from '../execution/executor.js'
import { runMetadata, type TimedRun } from '../execution/timed-run.js'
import { requestExamples, successExample } from '../http/algorithm-examples.js'
import { algorithmSchemaId, documentedParams } from '../http/algorithm-schemas.js'
import { algorithmBounds, bodyBounds, withBodyBounds } from '../http/body-bounds.js'
import { answerErrorsAs } from '../http/error-handler.js'
import { flat, tooLarge } from '../http/examples.js'
import { losslessObject } from '../http/json-body.js'
import { sendJsonText } from '../http/json-reply.js'
import { described, ErrorResponse, HTTPValidationError, Metadata, wrappedError } from '../http/schemas.js'
import { answerCall, syncTimeLimit } from '../http/sync-call.js'
import { validatorCompiler } from '../http/validation.js'

export interface AlgorithmRouteOptions {
  algorithms: Registry
  executor: Executor
  /** The settings of the request bounds: each algorithm's own are in effect on its routes. */
  bounds: BoundSettings
  factorBudgetMs: number
  /** ALGOSERVE_INVOKE_TIMEOUT_MS. */
  timeoutMs: number
  /** How many live processes take each algorithm's jobs; null when unknown (the job backend's). */
  workers: () => Promise<ReadonlyMap<string, number> | null>
}

const NameParams = Type.Object({
  name: Type.String({ description: 'The algorithm name, case-sensitive.' }),
})

const AlgorithmSummary = Type.Object({
  name: Type.String(),
  version: Type.String(),
  description: Type.String(),
})

const Workers = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
  description:
    "Live processes that take this algorithm's jobs (with Redis, the workers serving it), read at each " +
    'request; null when the job store cannot tell. At 0, its jobs wait until a worker serving it starts.',
})

const ListedAlgorithm = Type.Object({ ...AlgorithmSummary.properties, workers: Workers })

const RequestLimits = Type.Object(
  {
    max_body_bytes: Type.Integer({
      description: 'The largest body, in bytes; larger is 413 PAYLOAD_TOO_LARGE.',
    }),
    max_json_values: Type.Integer({
      description: 'The most JSON values in a body; more is 422 json_invalid.',
    }),
    max_json_depth: Type.Integer({
      description: 'The most nesting levels of arrays and objects in a body; deeper is 422 json_invalid.',
    }),
    max_string_length: Type.Integer({
      description:
        'The most characters of one string, key or value, between its quotes in the body; longer is 422 json_invalid.',
    }),
    max_digits: Type.Integer({ description: 'The most digits of an integer; more is 400 VALIDATION_ERROR.' }),
  },
  {
    description:
      "The bounds in effect on a request for it: its contract's maxBodyBytes, maxJsonValues, maxJsonDepth, " +
      'maxStringLength and maxDigits, else the ALGOSERVE_MAX_* settings (docs/algorithms.md, request bounds).',
  },
)

const JSON_TYPE = 'application/json; charset=utf-8'

const summary = ({ name, version, description }: Algorithm) => ({ name, version, description })

/** What the routes show of a set of algorithms: kept until a reload replaces the set. */
interface Shown {
  generation: number
  names: string[]
  /** Each name's default version, by name. */
  sorted: Algorithm[]
  /** GET /algorithms/{name}'s fixed members, written once per set. */
  details: Map<string, string>
}

export const algorithmRoutes: FastifyPluginAsyncTypebox<AlgorithmRouteOptions> = async (app, options) => {
  const { algorithms, executor, factorBudgetMs } = options
  let shown: Shown | undefined
  // Read per request, written again after a reload: the routes show the set being served.
  const current = (): Shown => {
    if (shown?.generation === algorithms.generation) return shown
    const names = algorithms.names()
    const sorted = names.map((name) => algorithms.defaultOf(name) as Algorithm)
    // The schemas are the modules' own, shown as they are.
    const details = new Map(
      sorted.map((algorithm) => [
        algorithm.name,
        stringify({
          name: algorithm.name,
          version: algorithm.version,
          description: algorithm.description,
          params: algorithm.module.params,
          result: algorithm.module.result,
          examples: algorithm.module.examples ?? [],
          timeout_ms: algorithm.timeoutMs,
          limits: shownBounds(algorithm, options.bounds),
        }) as string,
      ]),
    )
    shown = { generation: algorithms.generation, names, sorted, details }
    return shown
  }
  const find = (name: string): Algorithm => {
    const algorithm = algorithms.defaultOf(name)
    if (algorithm === undefined) throw new AlgorithmNotFoundError(name, algorithms.names())
    return algorithm
  }
  const listing = async () => {
    const workers = await options.workers().catch(() => null)
    return JSON.stringify({
      algorithms: current().sorted.map(({ name, version, description }) => ({
        name,
        version,
        description,
        workers: workers === null ? null : (workers.get(name) ?? 0),
      })),
    })
  }
  /** Each version's bounds, timeout and digit limit, worked out at its first call. */
  const limitsOf = new WeakMap<Algorithm, { timeoutMs: number; paramLimits: ParamLimits }>()
  const limits = (algorithm: Algorithm) => {
    let found = limitsOf.get(algorithm)
    if (found === undefined) {
      const { paramLimits } = algorithmBounds(algorithm, options.bounds)
      found = { timeoutMs: syncTimeLimit(algorithm, options.timeoutMs), paramLimits }
      limitsOf.set(algorithm, found)
    }
    return found
  }
  /** One synchronous call of the version that serves it, answered as /invoke is. */
  const invoke = (algorithm: Algorithm, request: FastifyRequest, reply: FastifyReply) => {
    const { timeoutMs, paramLimits } = limits(algorithm)
    // Checked to be an object by the route's schema.
    const params = readParams(algorithm, request.body as Record<string, unknown>, paramLimits, ['body'])
    const call = { algorithm, params, budgetMs: factorBudgetMs, timeoutMs }
    return answerCall(executor, call, reply, (run: TimedRun): void => {
      const metadata = runMetadata(algorithm, run)
      reply.type(JSON_TYPE).serializer(String)
      if (run.resultJson === undefined) {
        reply.send(stringify({ request_id: request.id, status: 'success', result: run.result, metadata }))
        return
      }
      // A long result's JSON as it was written off the main thread, bytes and all: nothing to write
      // again.
      const head = `{"request_id":${JSON.stringify(request.id)},"status":"success","result":`
      const tail = `,"metadata":${JSON.stringify(metadata)}}`
      reply.send(Buffer.concat([Buffer.from(head), run.resultJson, Buffer.from(tail)]))
    })
  }

  app.get(
    '/algorithms',
    {
      config: { kind: 'api', errorShape: 'wrapped' },
      schema: {
        summary: 'List the algorithms',
        operationId: 'listAlgorithms',
        tags: ['algorithms'],
        description:
          'Every algorithm this service serves, sorted by name, with how many live processes take its jobs.',
        response: {
          200: Type.Object({ algorithms: Type.Array(ListedAlgorithm) }, { description: 'The algorithms.' }),
        },
        'x-examples': () => ({
          responses: {
            200: { algorithms: current().sorted.map((algorithm) => ({ ...summary(algorithm), workers: 1 })) },
          },
        }),
      },
    },
    async (_request, reply) => sendJsonText(reply, await listing()),
  )

  app.get(
    '/algorithms/:name',
    {
      config: { kind: 'api', errorShape: 'wrapped' },
      schema: {
        summary: 'Read an algorithm, with its schemas',
        operationId: 'getAlgorithm',
        tags: ['algorithms'],
        params: NameParams,
        response: {
          200: Type.Object(
            {
              ...AlgorithmSummary.properties,
              params: Type.Object(
                {},
                { additionalProperties: true, description: 'JSON Schema of its params.' },
              ),
              result: Type.Object(
                {},
                { additionalProperties: true, description: 'JSON Schema of its result.' },
              ),
              examples: Type.Array(Type.Object({ params: Type.Object({}, { additionalProperties: true }) })),
              timeout_ms: Type.Union([Type.Integer(), Type.Null()], {
                description: 'Its own time limit of one run, in ms; null when it has none.',
              }),
              limits: RequestLimits,
              workers: Workers,
            },
            { description: 'The algorithm.' },
          ),
          404: wrappedError('ALGORITHM_NOT_FOUND; details.available_algorithms lists the known names.'),
        },
        'x-examples': () => {
          // The first algorithm by name.
          const [first] = current().sorted as [Algorithm]
          return {
            parameters: { name: first.name },
            responses: {
              200: {
                ...summary(first),
                params: first.module.params,
                result: first.module.result,
                examples: first.module.examples ?? [],
                timeout_ms: first.timeoutMs,
                limits: shownBounds(first, options.bounds),
                workers: 1,
              },
              404: {
                detail: flat('ALGORITHM_NOT_FOUND', "Algorithm 'Sorter' is not known.", {
                  available_algorithms: current().names,
                }),
              },
            },
          }
        },
      },
    },
    async (request, reply) => {
      const { name } = request.params
      find(name)
      const workers = await options.workers().catch(() => null)
      const count = workers === null ? null : (workers.get(name) ?? 0)
      // The fixed members as written once, and the live count.
      const fixed = current().details.get(name) as string
      return sendJsonText(reply, `${fixed.slice(0, -1)},"workers":${count}}`)
    },
  )

  for (const algorithm of current().sorted) {
    const timeoutMs = syncTimeLimit(algorithm, options.timeoutMs)
    const { bounds, owner } = algorithmBounds(algorithm, options.bounds)
    await withBodyBounds(app, bodyBounds(bounds, owner), (context) => {
      // The context withBodyBounds makes is untyped: its routes are typed again, as this plugin's are.
      context.withTypeProvider<TypeBoxTypeProvider>().post(
        `/algorithms/${algorithm.name}/invoke`,
        {
          bodyLimit: bounds.maxBodyBytes,
          config: { kind: 'api', errorShape: 'flat', boundOwner: owner },
          validatorCompiler: anyObjectBody,
          schema: {
            summary: `Call ${algorithm.name}`,
            operationId: `invoke_${algorithm.name}`,
            tags: ['algorithms'],
            description:
              `${algorithm.description}\n\nThe body is its params. A run is stopped after ${timeoutMs / 1000} s ` +
              '(its own timeoutMs, at most ALGOSERVE_INVOKE_TIMEOUT_MS) with 500 ALGORITHM_ERROR.',
            body: losslessObject(Type.Unsafe(documentedParams(algorithm, (id) => Type.Ref(id)))),
            response: {
              200: {
                ...Type.Object({
                  request_id: Type.String(),
                  status: Type.Literal('success'),
                  result: Type.Ref(algorithmSchemaId(algorithm.name, 'result')),
                  metadata: Type.Ref(Metadata),
                }),
                description: 'The result, with metadata.',
              },
              400: described(
                ErrorResponse,
                'VALIDATION_ERROR: an integer with too many digits, or params the algorithm refused (its message).',
              ),
              413: described(
                ErrorResponse,
                `PAYLOAD_TOO_LARGE: the body is larger than ${bounds.maxBodyBytes} bytes (its maxBodyBytes, else ` +
                  'ALGOSERVE_MAX_BODY_BYTES).',
              ),
              422: described(HTTPValidationError, 'The body failed the params schema.'),
              500: described(
                ErrorResponse,
                'ALGORITHM_ERROR: the run threw (its message is shown), broke its result schema, or passed its ' +
                  'time limit; or INTERNAL_ERROR.',
              ),
              503: described(
                ErrorResponse,
                'SERVICE_UNAVAILABLE: no worker thread was free within ALGOSERVE_INVOKE_QUEUE_TIMEOUT_MS; see ' +
                  'Retry-After.',
              ),
            },
            'x-examples': () => invokeExamples(algorithm, options.bounds.maxBodyBytes),
          },
        },
        // The name's default now: a reload may have added versions since the route was written, or
        // removed the name (a 404 then, wrapped as for any unknown name).
        (request, reply) => {
          if (!algorithms.has(algorithm.name)) answerErrorsAs(request, 'wrapped')
          return invoke(find(algorithm.name), request, reply)
        },
      )
    })
  }

  app.post(
    '/algorithms/:name/invoke',
    {
      config: { kind: 'api', errorShape: 'wrapped' },
      schema: { hide: true, params: NameParams },
    },
    // A name a reload added, read under the settings' request bounds, answered as the others; an unknown
    // name, 404.
    (request, reply) => {
      const algorithm = find(request.params.name)
      answerErrorsAs(request, 'flat')
      return invoke(algorithm, request, reply)
    },
  )
}

/**
 * The body of an algorithm's invoke route must be a JSON object: that much is checked as every body is
 * (a 422 in the interface's words); the params schema is the algorithm's, checked by readParams. It
 * refers to no shared schema.
 */
const anyObjectBody: FastifySchemaCompiler<unknown> = (route) =>
  validatorCompiler([])({ ...route, schema: Type.Object({}, { additionalProperties: true }) })

/** The examples of an algorithm's invoke operation: its own examples, and what each status answers. */
const invokeExamples = (algorithm: Algorithm, maxBodyBytes: number) => ({
  requestExamples: requestExamples(algorithm, (params) => params),
  responses: {
    200: successExample(algorithm),
    400: flat('VALIDATION_ERROR', 'n has 5000 digits; at most 4300 are allowed.', {
      field: 'n',
      value: '1234567890…(5000 digits)',
    }),
    413: flat(...tooLarge(maxBodyBytes)),
    422: { detail: [{ type: 'missing', loc: ['body', 'n'], msg: 'Field required', input: {} }] },
    500: flat('ALGORITHM_ERROR', `The algorithm '${algorithm.name}' failed while running: n is too large`),
    503: flat('SERVICE_UNAVAILABLE', 'Every worker thread is busy; try again later.'),
  },
})
