// The examples of the OpenAPI document that come from the algorithms served: each one's own `examples`
// (its params; a sample of its params schema when it gives none) as named request bodies, and the result
// of its first example: run on the spot when it runs inline (microseconds), else a sample of its result
// schema. The algorithm the job examples show is the one POST /invoke calls, else the first by name.
import { parse, stringify } from 'lossless-json'
import type { Algorithm } from '../algorithms/algorithm.js'
import { storedParams } from '../algorithms/params.js'
import { invokeAlgorithm, type Registry } from '../algorithms/registry.js'
import { timedRunInline } from '../execution/timed-run.js'
import { sampleComponent } from './algorithm-schemas.js'
import { REQUEST_ID } from './examples.js'

export interface NamedExample {
  summary: string
  value: unknown
}

/** The params of an algorithm's examples, or a sample when it gives none. */
const exampleParams = (algorithm: Algorithm): unknown[] => {
  const given = (algorithm.module.examples ?? []).map((example) => example.params)
  return given.length > 0 ? given : [sampleComponent(algorithm, 'params')]
}

/** No time limit to speak of: only a run the algorithm finds cheap is made. */
const EXAMPLE_RUN = {
  signal: new AbortController().signal,
  deadline: Number.POSITIVE_INFINITY,
  budgetMs: 0,
  progress: () => {},
}

/** The result of an algorithm's first example, as JSON reads it; a sample of its result schema otherwise. */
export function exampleResult(algorithm: Algorithm): unknown {
  const [params] = exampleParams(algorithm)
  if (algorithm.inline !== undefined && typeof params === 'object' && params !== null) {
    const raw = params as Record<string, unknown>
    const run = timedRunInline(algorithm, storedParams(algorithm, raw, Number.POSITIVE_INFINITY), EXAMPLE_RUN)
    if (run !== undefined) return parse(stringify(run.result) as string, undefined, Number)
  }
  return sampleComponent(algorithm, 'result')
}

/** The longest summary of a named example. */
const SUMMARY_CHARS = 100

/**
 * An algorithm's examples as a media type's `examples`, named the algorithm's name, then -2, -3, ...;
 * `body` makes a request body of its params (the params themselves, or a POST /jobs body).
 */
export function requestExamples(
  algorithm: Algorithm,
  body: (params: unknown) => unknown,
): Record<string, NamedExample> {
  return Object.fromEntries(
    exampleParams(algorithm).map((params, i) => {
      const text = `${algorithm.name}: ${JSON.stringify(params)}`
      const summary = text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS - 1)}…` : text
      return [i === 0 ? algorithm.name : `${algorithm.name}-${i + 1}`, { summary, value: body(params) }]
    }),
  )
}

export const sortedAlgorithms = (algorithms: Registry): Algorithm[] =>
  algorithms.names().map((name) => algorithms.defaultOf(name) as Algorithm)

/** Every algorithm's examples as POST /jobs bodies, by name. */
export const jobRequestExamples = (algorithms: Registry): Record<string, NamedExample> =>
  Object.assign(
    {},
    ...sortedAlgorithms(algorithms).map((algorithm) =>
      requestExamples(algorithm, (params) => ({ algorithm: algorithm.name, params })),
    ),
  )

/** The algorithm the job examples show: its first example and its result. */
export interface ShownAlgorithm {
  algorithm: string
  version: string
  params: unknown
  result: unknown
}

export function shownAlgorithm(algorithms: Registry): ShownAlgorithm {
  const algorithm = invokeAlgorithm(algorithms) ?? sortedAlgorithms(algorithms)[0]
  if (algorithm === undefined) throw new Error('no algorithm is served: the document has none to show')
  return {
    algorithm: algorithm.name,
    version: algorithm.version,
    params: exampleParams(algorithm)[0],
    result: exampleResult(algorithm),
  }
}

/** The metadata of a run of the algorithm shown. */
export const metadataOf = (shown: Pick<ShownAlgorithm, 'algorithm' | 'version'>) => ({
  algorithm: shown.algorithm,
  version: shown.version,
  elapsed_time: 0.000012,
})

/** A synchronous call's 200 answer: the result of the algorithm's first example, with its metadata. */
export const successExample = (algorithm: Algorithm) => ({
  request_id: REQUEST_ID,
  status: 'success',
  result: exampleResult(algorithm),
  metadata: metadataOf({ algorithm: algorithm.name, version: algorithm.version }),
})
