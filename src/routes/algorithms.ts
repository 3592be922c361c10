// The algorithms the service serves: GET /algorithms lists them, GET /algorithms/{name} shows one with
// its schemas, and POST /algorithms/{name}/invoke calls one synchronously, answered as /invoke is, on its
// default version (drawn, under a canary split); POST /algorithms/{name}/versions/{version}/invoke on the
// version named (exact, or the highest loaded match of a semver range). Each call reads the registry as
// it comes, so that it runs on what is loaded then. Each algorithm has its own invoke route, so that the
// OpenAPI document shows its params and result; an unknown name reaches the parametric route, which
// answers 404. After a reload (algorithms/reload.ts) each route calls what is loaded then, and a name the
// reload added is called through the parametric route.
import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify'
import { stringify } from 'lossless-json'
import type { Algorithm } from '../algorithms/algorithm.js'
import { readParams } from '../algorithms/params.js'
import { type Registry, resolveVersion, versionKey } from '../algorithms/registry.js'
import {
  type BoundOwner,
  type BoundSettings,
  largestBounds,
  shownBounds,
} from '../algorithms/request-bounds.js'
import { AlgorithmNotFoundError } from '../errors.js'
import type { Executor } from '../execution/executor.js'
import { runMetadata, type TimedRun } from '../execution/timed-run.js'
import { requestExamples, successExample } from '../http/algorithm-examples.js'
import { algorithmSchemaId, documentedParams, versionSchemaId } from '../http/algorithm-schemas.js'
import {
  algorithmBounds,
  bodyBounds,
  checkJobBody,
  type HeldBounds,
  heldBounds,
  unionBounds,
  withBodyBounds,
} from '../http/body-bounds.js'
import { answerErrorsAs } from '../http/error-handler.js'
import { flat, tooLarge } from '../http/examples.js'
import { losslessObject } from '../http/json-body.js'
import { sendJsonText } from '../http/json-reply.js'
import { described, ErrorResponse, HTTPValidationError, Metadata, wrappedError } from '../http/schemas.js'
import { answerCall, syncTimeLimit } from '../http/sync-call.js'
import { validatorCompiler } from '../http/validation.js'
import { versionHeaders } from '../http/version-headers.js'

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
  /** How many take each version's jobs, by versionKey; null when the backend cannot tell. */
  versionWorkers: () => Promise<ReadonlyMap<string, number> | null>
}

const NameParams = Type.Object({
  name: Type.String({ description: 'The algorithm name, case-sensitive.' }),
})

const VersionParams = Type.Object({
  ...NameParams.properties,
  version: Type.String({
    description:
      'An exact version (`1.2.0`) or a semver range (`1.x`, `^1.2`), URL-encoded: the highest loaded match.',
  }),
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

const VersionFlags = {
  default: Type.Boolean({
    description:
      'Whether a call or job that names no version may run it: the highest version, else the one ALGOSERVE_DEFAULT_VERSIONS names (several, split by weight).',
  }),
  weight: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
    description:
      "Its weight in the default's split (ALGOSERVE_DEFAULT_VERSIONS); null when it is not a default.",
  }),
  deprecated: Type.Boolean({
    description: 'Whether ALGOSERVE_DEPRECATED_VERSIONS deprecates it: its responses carry Deprecation.',
  }),
  sunset: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
    description: 'The day it may stop being served (its responses carry Sunset); null when none is set.',
  }),
}

const ListedVersion = Type.Object(
  {
    version: Type.String(),
    ...VersionFlags,
    workers: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: "Live processes that take this version's jobs; null when the job store cannot tell.",
    }),
  },
  { description: 'One loaded version.' },
)

const Versions = Type.Array(ListedVersion, { description: 'Its loaded versions, highest first.' })

const ListedAlgorithm = Type.Object(
  { ...AlgorithmSummary.properties, workers: Workers, versions: Versions },
  { description: "An algorithm: the top-level members are its default version's." },
)

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

export const algorithmRoutes: FastifyPluginAsyncTypebox<AlgorithmRouteOptions> = async (app, options) => {
  const { algorithms, executor, factorBudgetMs } = options
  const policy = app.versionPolicy
  // Read per request: a reload changes the set in place.
  const defaults = () => algorithms.names().map((name) => algorithms.defaultOf(name) as Algorithm)
  const find = (name: string): Algorithm => {
    const algorithm = algorithms.defaultOf(name)
    if (algorithm === undefined) throw new AlgorithmNotFoundError(name, algorithms.names())
    return algorithm
  }
  const flags = (algorithm: Algorithm) => {
    const share = algorithms.defaultShares(algorithm.name).find((one) => one.algorithm === algorithm)
    const deprecation = policy.deprecation(algorithm)
    return {
      default: share !== undefined,
      weight: share?.weight ?? null,
      deprecated: deprecation !== undefined,
      sunset: deprecation?.sunset?.toISOString().slice(0, 10) ?? null,
    }
  }
  const counts = async () => {
    const [byName, byVersion] = await Promise.all([
      options.workers().catch(() => null),
      options.versionWorkers().catch(() => null),
    ])
    return {
      of: (name: string) => (byName === null ? null : (byName.get(name) ?? 0)),
      ofVersion: (algorithm: Algorithm) =>
        byVersion === null ? null : (byVersion.get(versionKey(algorithm.name, algorithm.version)) ?? 0),
    }
  }
  type Counts = Awaited<ReturnType<typeof counts>>
  const versionsOf = (name: string, workers: Counts) =>
    algorithms.versions(name).map((algorithm) => ({
      version: algorithm.version,
      ...flags(algorithm),
      workers: workers.ofVersion(algorithm),
    }))
  const listing = async () => {
    const workers = await counts()
    return JSON.stringify({
      algorithms: defaults().map(({ name, version, description }) => ({
        name,
        version,
        description,
        workers: workers.of(name),
        versions: versionsOf(name, workers),
      })),
    })
  }
  const versionsExample = (name: string) => versionsOf(name, { of: () => 1, ofVersion: () => 1 })

  app.get(
    '/algorithms',
    {
      config: { kind: 'api', errorShape: 'wrapped' },
      schema: {
        summary: 'List the algorithms',
        operationId: 'listAlgorithms',
        tags: ['algorithms'],
        description:
          'Every algorithm this service serves, sorted by name, with how many live processes take its jobs, ' +
          'and its loaded versions (which are default or deprecated, and the live processes of each).',
        response: {
          200: Type.Object({ algorithms: Type.Array(ListedAlgorithm) }, { description: 'The algorithms.' }),
        },
        'x-examples': () => ({
          responses: {
            200: {
              algorithms: defaults().map((algorithm) => ({
                ...summary(algorithm),
                workers: 1,
                versions: versionsExample(algorithm.name),
              })),
            },
          },
        }),
      },
    },
    async (_request, reply) => sendJsonText(reply, await listing()),
  )

  // The schemas are the modules' own, shown as they are.
  const fixedMembers = (algorithm: Algorithm) => ({
    ...summary(algorithm),
    params: algorithm.module.params,
    result: algorithm.module.result,
    examples: algorithm.module.examples ?? [],
    timeout_ms: algorithm.timeoutMs,
    limits: shownBounds(algorithm, options.bounds),
  })
  // Written once per version (a reload brings new Algorithm objects): schemas can be large.
  const written = new WeakMap<Algorithm, string>()
  const detail = (algorithm: Algorithm): string => {
    let text = written.get(algorithm)
    if (text === undefined) {
      text = stringify(fixedMembers(algorithm)) as string
      written.set(algorithm, text)
    }
    return text
  }
  const detailExample = (algorithm: Algorithm) => ({ ...fixedMembers(algorithm), workers: 1 })
  const DetailMembers = {
    ...AlgorithmSummary.properties,
    params: Type.Object({}, { additionalProperties: true, description: 'JSON Schema of its params.' }),
    result: Type.Object({}, { additionalProperties: true, description: 'JSON Schema of its result.' }),
    examples: Type.Array(Type.Object({ params: Type.Object({}, { additionalProperties: true }) })),
    timeout_ms: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Its own time limit of one run, in ms; null when it has none.',
    }),
    limits: RequestLimits,
    workers: Workers,
  }
  const notFound = (example: string) =>
    wrappedError(`ALGORITHM_NOT_FOUND; details.available_algorithms lists the known names${example}.`)

  app.get(
    '/algorithms/:name',
    {
      config: { kind: 'api', errorShape: 'wrapped' },
      schema: {
        summary: 'Read an algorithm, with its schemas',
        operationId: 'getAlgorithm',
        tags: ['algorithms'],
        description:
          "Its default version's schemas, examples and limits, and the list of its loaded versions.",
        params: NameParams,
        response: {
          200: Type.Object({ ...DetailMembers, versions: Versions }, { description: 'The algorithm.' }),
          404: notFound(''),
        },
        'x-examples': () => {
          // The first algorithm by name.
          const [first] = defaults() as [Algorithm]
          return {
            parameters: { name: first.name },
            responses: {
              200: { ...detailExample(first), versions: versionsExample(first.name) },
              404: {
                detail: flat('ALGORITHM_NOT_FOUND', "Algorithm 'Sorter' is not known.", {
                  available_algorithms: algorithms.names(),
                }),
              },
            },
          }
        },
      },
    },
    async (request, reply) => {
      const algorithm = find(request.params.name)
      const workers = await counts()
      const versions = JSON.stringify(versionsOf(algorithm.name, workers))
      // The fixed members as written by lossless-json (integers of any size), and the live ones.
      return sendJsonText(
        reply,
        `${detail(algorithm).slice(0, -1)},"workers":${workers.of(algorithm.name)},"versions":${versions}}`,
      )
    },
  )

  app.get(
    '/algorithms/:name/versions/:version',
    {
      config: { kind: 'api', errorShape: 'wrapped' },
      schema: {
        summary: 'Read one version of an algorithm, with its schemas',
        operationId: 'getAlgorithmVersion',
        tags: ['algorithms'],
        description:
          'The schemas, examples and limits of one version: an exact version, or a semver range (`1.x`, `^1.2`) ' +
          'that picks the highest loaded match.',
        params: VersionParams,
        response: {
          200: Type.Object(
            { ...DetailMembers, ...VersionFlags },
            { description: 'The version: `workers` counts the live processes that take its jobs.' },
          ),
          404: notFound(', and details.available_versions its loaded versions'),
        },
        'x-examples': () => {
          const [first] = defaults() as [Algorithm]
          return {
            parameters: { name: first.name, version: first.version },
            responses: {
              200: { ...detailExample(first), ...flags(first) },
              404: {
                detail: flat(
                  'ALGORITHM_NOT_FOUND',
                  `Algorithm '${first.name}' has no loaded version matching '9.x'.`,
                  {
                    available_algorithms: algorithms.names(),
                    available_versions: algorithms.versions(first.name).map((one) => one.version),
                  },
                ),
              },
            },
          }
        },
      },
    },
    async (request, reply) => {
      const algorithm = resolveVersion(algorithms, request.params.name, request.params.version)
      const workers = await counts()
      const live = JSON.stringify({ workers: workers.ofVersion(algorithm), ...flags(algorithm) }).slice(1)
      return sendJsonText(reply, `${detail(algorithm).slice(0, -1)},${live}`)
    },
  )

  /**
   * Answers a call of `algorithm` (the version resolved for it) whose body was read under larger bounds
   * than its own when `held.tighter`, as /invoke answers; the version is named in Algorithm-Version.
   */
  const call = (algorithm: Algorithm, held: HeldBounds, request: FastifyRequest, reply: FastifyReply) => {
    // Before the params are read: a 400 or 422 names the version whose schema refused them too.
    versionHeaders(reply, algorithm)
    const start = () => {
      const params = readParams(algorithm, request.body as Record<string, unknown>, held.paramLimits, [
        'body',
      ])
      const timeoutMs = syncTimeLimit(algorithm, options.timeoutMs)
      return answerCall(executor, { algorithm, params, budgetMs: factorBudgetMs, timeoutMs }, reply, (run) =>
        sendResult(algorithm, run, request, reply),
      )
    }
    return held.tighter ? checkJobBody(request, held.bounds, held.owner).then(start) : start()
  }

  // A route per name (its default, drawn per call under a canary split: read under the bounds of any of
  // its versions, then held to the version drawn) and per loaded version (its own bounds), so that the
  // document shows each one's params and result.
  const routes = [
    ...defaults().map((algorithm) => ({ algorithm, versioned: false })),
    ...algorithms.all().map((algorithm) => ({ algorithm, versioned: true })),
  ]
  for (const { algorithm, versioned } of routes) {
    const { name, version } = algorithm
    const timeoutMs = syncTimeLimit(algorithm, options.timeoutMs)
    const bounds = versioned
      ? algorithmBounds(algorithm, options.bounds).bounds
      : unionBounds(algorithms.versions(name), options.bounds)
    const { owner } = algorithmBounds(algorithm, options.bounds)
    const held = heldBounds(bounds, options.bounds)
    // A name's default route measures its bodies: a reload may bring a version with smaller bounds than
    // those it reads under.
    const measured = !versioned
    const deprecation = policy.deprecation(algorithm)
    const id = (part: 'params' | 'result') =>
      versioned ? versionSchemaId(algorithm, part) : algorithmSchemaId(name, part)
    await withBodyBounds(app, bodyBounds(bounds, owner, measured), (context) => {
      // The context withBodyBounds makes is untyped: its routes are typed again, as this plugin's are.
      context.withTypeProvider<TypeBoxTypeProvider>().post(
        versioned ? `/algorithms/${name}/versions/${version}/invoke` : `/algorithms/${name}/invoke`,
        {
          bodyLimit: bounds.maxBodyBytes,
          config: { kind: 'api', errorShape: 'flat', boundOwner: owner },
          validatorCompiler: anyObjectBody,
          schema: {
            summary: versioned ? `Call ${name} ${version}` : `Call ${name}`,
            operationId: versioned
              ? `invoke_${name}_${version.replace(/[^A-Za-z0-9._-]/g, '_')}`
              : `invoke_${name}`,
            tags: ['algorithms'],
            ...(versioned && deprecation !== undefined ? { deprecated: true } : {}),
            description:
              `${algorithm.description}\n\n${versioned ? `Version ${version} exactly.` : defaultNote(algorithms, name)} ` +
              `The body is its params. A run is stopped after ${timeoutMs / 1000} s ` +
              '(its own timeoutMs, at most ALGOSERVE_INVOKE_TIMEOUT_MS) with 500 ALGORITHM_ERROR. The ' +
              'Algorithm-Version header names the version that served the call' +
              (deprecation === undefined || !versioned
                ? '; Deprecation and Sunset headers come with a deprecated one.'
                : `: it is deprecated (Deprecation header${deprecation.sunset === null ? '' : `; Sunset: ${deprecation.sunset.toUTCString()}`}).`),
            body: losslessObject(
              Type.Unsafe(documentedParams(algorithm, (ref) => Type.Ref(ref), id('params'))),
            ),
            response: {
              200: {
                ...Type.Object({
                  request_id: Type.String(),
                  status: Type.Literal('success'),
                  result: Type.Ref(id('result')),
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
          // A name or version a reload removed: the 404 in the shape the parametric route documents.
          if (!algorithms.has(name)) answerErrorsAs(request, 'wrapped')
          const called = versioned
            ? resolveVersion(algorithms, name, version)
            : resolveVersion(algorithms, name)
          return call(called, held(called), request, reply)
        },
      )
    })
  }

  // Any version of any name: read under the largest bounds of all, then held to the version called.
  const largest = largestBounds(algorithms.all(), options.bounds)
  const anyHeld = heldBounds(largest, options.bounds)
  // A reload adds no version whose bounds are above these (checkReadBounds, at the reload); one whose
  // bounds are below them may come with any reload, so every body is measured here.
  const readOwner: BoundOwner = { settings: options.bounds }
  await withBodyBounds(app, bodyBounds(largest, readOwner, true), (context) => {
    const typed = context.withTypeProvider<TypeBoxTypeProvider>()
    typed.post(
      '/algorithms/:name/versions/:version/invoke',
      {
        bodyLimit: largest.maxBodyBytes,
        config: { kind: 'api', errorShape: 'flat', boundOwner: readOwner },
        validatorCompiler: anyObjectBody,
        schema: { hide: true, params: VersionParams, body: Type.Object({}, { additionalProperties: true }) },
      },
      (request, reply) => {
        const called = resolveVersion(algorithms, request.params.name, request.params.version)
        return call(called, anyHeld(called), request, reply)
      },
    )
    // A name a reload added, answered as the others; an unknown name, 404.
    typed.post(
      '/algorithms/:name/invoke',
      {
        bodyLimit: largest.maxBodyBytes,
        config: { kind: 'api', errorShape: 'wrapped', boundOwner: readOwner },
        schema: { hide: true, params: NameParams },
      },
      (request, reply) => {
        find(request.params.name)
        answerErrorsAs(request, 'flat')
        const called = resolveVersion(algorithms, request.params.name)
        return call(called, anyHeld(called), request, reply)
      },
    )
  })
}

/** What the default route of a name runs. */
function defaultNote(algorithms: Registry, name: string): string {
  const shares = algorithms.defaultShares(name)
  if (shares.length <= 1) return `Its default version (${algorithms.defaultOf(name)?.version}).`
  const total = shares.reduce((sum, share) => sum + share.weight, 0)
  const split = shares.map(
    ({ algorithm, weight }) => `${algorithm.version} ${Math.round((100 * weight) / total)}%`,
  )
  return `Its default version, drawn per call: ${split.join(', ')}.`
}

/** Answers a call's run as /invoke does: the result, with its metadata. */
function sendResult(
  algorithm: Algorithm,
  run: TimedRun,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const metadata = runMetadata(algorithm, run)
  reply.type(JSON_TYPE).serializer(String)
  if (run.resultJson === undefined)
    return reply.send(stringify({ request_id: request.id, status: 'success', result: run.result, metadata }))
  // A long result's JSON as it was written off the main thread, bytes and all: nothing to write again, nor
  // to copy into one buffer with the envelope (copying megabytes into fresh memory holds the loop).
  const head = Buffer.from(`{"request_id":${JSON.stringify(request.id)},"status":"success","result":`)
  const tail = Buffer.from(`,"metadata":${JSON.stringify(metadata)}}`)
  reply.header('content-length', head.length + run.resultJson.length + tail.length)
  // Returned, so that the handler's promise does not end the reply before the stream is written.
  return reply.send(Readable.from([head, run.resultJson, tail], { objectMode: false }))
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
