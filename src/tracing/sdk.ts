// Tracing on: the OpenTelemetry Node.js SDK, configured by its own OTEL_* variables (exporter, protocol,
// endpoint, sampler, resource, propagators), with the maintained instrumentations of the HTTP server,
// undici (the webhooks' client) and ioredis; and the spans of the job's own seams (seams.ts). Loaded
// only by main.ts, and only when tracingWanted(): before the service's modules, so that the
// instrumentations patch them as they load (ESM through import-in-the-middle's loader hook).
import { register } from 'node:module'
import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api'
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis'
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici'
import { NodeSDK, resources } from '@opentelemetry/sdk-node'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import { offerExemplars } from '../metrics/metric-series.js'
import { VERSION } from '../version.js'
import { installTracing, type LostRun, type TraceCarrier, type Tracing } from './seams.js'

// Messaging attributes of the semantic conventions, still incubating: copied, as their authors advise,
// rather than imported from the incubating entry point, which may change them in any release.
const ATTR_MESSAGING_SYSTEM = 'messaging.system'
const ATTR_MESSAGING_OPERATION_TYPE = 'messaging.operation.type'
const ATTR_MESSAGING_OPERATION_NAME = 'messaging.operation.name'
const ATTR_MESSAGING_DESTINATION_NAME = 'messaging.destination.name'
const ATTR_MESSAGING_MESSAGE_ID = 'messaging.message.id'
const MESSAGING_SYSTEM = 'algoserve'
/** The job queue's name in the spans: one queue per algorithm. */
const queueOf = (algorithm: string) => `jobs.${algorithm}`

/**
 * How many runs' spans are kept for their job's end (`ended`): an end comes moments after its run, and
 * a run whose end never comes here (given back, or its end not stored) is forgotten past this many.
 */
const RUNS_KEPT = 1024

/** Probes and scrapes are not worth a trace each. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics'])

export interface StartedTracing {
  /** The trace and span ids of the active span, for each log line (pino's mixin); {} outside one. */
  logFields(): { trace_id?: string; span_id?: string }
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>
}

export function startTracing(): StartedTracing {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url)
  const sdk = new NodeSDK({
    // Our name and version unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise (the
    // environment's resource is merged over this one).
    resource: resources.defaultResource().merge(
      resources.resourceFromAttributes({
        [ATTR_SERVICE_NAME]: 'algoserve',
        [ATTR_SERVICE_VERSION]: VERSION,
      }),
    ),
    // Traces only: the metrics are Prometheus's (/metrics) and the logs are JSON lines on stdout. Without
    // readers given, the SDK would read OTEL_METRICS_EXPORTER, whose default exports OTLP metrics, and the
    // HTTP instrumentation would time every request into them, sampled or not.
    logRecordProcessors: [],
    metricReaders: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0] ?? ''),
      }),
      new UndiciInstrumentation(),
      // Only inside a traced request or run: BullMQ's polling would otherwise make a trace each.
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  })
  sdk.start()
  installTracing(jobTracing())
  // The latency histograms' exemplars: the span each observation was made in, when its trace is sampled
  // (one not sampled is exported nowhere).
  offerExemplars(() => {
    const span = trace.getActiveSpan()
    if (span === undefined) return undefined
    const { traceId, spanId, traceFlags } = span.spanContext()
    if ((traceFlags & TraceFlags.SAMPLED) === 0) return undefined
    return { trace_id: traceId, span_id: spanId }
  })
  return {
    logFields() {
      const span = trace.getActiveSpan()
      if (span === undefined) return {}
      const { traceId, spanId } = span.spanContext()
      return { trace_id: traceId, span_id: spanId }
    },
    shutdown: () => sdk.shutdown(),
  }
}

/** A job's stored context as a carrier (the JSON text `job.trace` holds), or the root for none. */
function storedContext(stored: string | undefined | null): Context {
  if (stored === undefined || stored === null) return ROOT_CONTEXT
  try {
    return propagation.extract(ROOT_CONTEXT, JSON.parse(stored) as TraceCarrier)
  } catch {
    return ROOT_CONTEXT
  }
}

function carrierOf(active: Context): TraceCarrier | undefined {
  const carrier: Partial<TraceCarrier> = {}
  propagation.inject(active, carrier)
  return carrier.traceparent === undefined ? undefined : (carrier as TraceCarrier)
}

/** Ends `span` with `error` recorded as its failure. */
function failed(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error))
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  })
}

function jobTracing(): Tracing {
  const tracer = trace.getTracer('algoserve', VERSION)
  const jobAttributes = (id: string, algorithm: string): Attributes => ({
    [ATTR_MESSAGING_SYSTEM]: MESSAGING_SYSTEM,
    [ATTR_MESSAGING_DESTINATION_NAME]: queueOf(algorithm),
    [ATTR_MESSAGING_MESSAGE_ID]: id,
    'algoserve.job.id': id,
    'algoserve.algorithm': algorithm,
  })
  const processAttributes = (attempt: number): Attributes => ({
    [ATTR_MESSAGING_OPERATION_TYPE]: 'process',
    [ATTR_MESSAGING_OPERATION_NAME]: 'process',
    'algoserve.job.attempt': attempt,
  })
  // The context of each run's span by job and run, until the job's end is told (`ended`).
  const runs = new Map<string, Context>()
  const runKey = (id: string, attempt: number) => `${attempt}:${id}`
  return {
    async submit(job, submit) {
      const span = tracer.startSpan(`send ${queueOf(job.algorithm)}`, {
        kind: SpanKind.PRODUCER,
        attributes: {
          ...jobAttributes(job.id, job.algorithm),
          [ATTR_MESSAGING_OPERATION_TYPE]: 'send',
          [ATTR_MESSAGING_OPERATION_NAME]: 'send',
        },
      })
      const sent = trace.setSpan(context.active(), span)
      const carrier = carrierOf(sent)
      if (carrier !== undefined) job.trace = JSON.stringify(carrier)
      try {
        return await context.with(sent, submit)
      } catch (error) {
        failed(span, error)
        throw error
      } finally {
        span.end()
      }
    },

    async run(job, version, run) {
      const parent = storedContext(job.trace)
      const startedAt = Date.now()
      const attributes = jobAttributes(job.id, job.algorithm)
      // The wait in the queue, before the first run: from the job's creation to now.
      if (job.runs <= 1) {
        tracer
          .startSpan(
            `wait ${queueOf(job.algorithm)}`,
            { kind: SpanKind.INTERNAL, startTime: job.createdAt, attributes },
            parent,
          )
          .end(startedAt)
      }
      const span = tracer.startSpan(
        `process ${queueOf(job.algorithm)}`,
        {
          kind: SpanKind.CONSUMER,
          startTime: startedAt,
          attributes: {
            ...attributes,
            ...processAttributes(job.runs),
            'algoserve.algorithm.version': version ?? '',
          },
        },
        parent,
      )
      const running = trace.setSpan(parent, span)
      const key = runKey(job.id, job.runs)
      runs.set(key, running)
      if (runs.size > RUNS_KEPT) runs.delete(runs.keys().next().value as string)
      try {
        const outcome = await context.with(running, run)
        span.setAttribute('algoserve.job.outcome', outcome.status)
        if (outcome.status === 'failed')
          span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error })
        return outcome
      } catch (error) {
        // Given back at a shutdown, or lost with its thread: it runs again, in a span of its own.
        span.setAttribute('algoserve.job.outcome', 'released')
        runs.delete(key)
        failed(span, error)
        throw error
      } finally {
        span.end()
      }
    },

    lost(lost: LostRun) {
      const parent = storedContext(lost.trace)
      if (trace.getSpanContext(parent) === undefined) return
      const attributes: Attributes = {
        ...jobAttributes(lost.id, lost.algorithm),
        ...processAttributes(lost.attempt),
        'algoserve.job.outcome': 'lost',
      }
      if (lost.worker !== undefined) attributes['algoserve.job.worker'] = lost.worker
      // A run lost before it began lasted no time that anyone knows of.
      const startTime = Math.min(lost.startedAt ?? lost.lostAt, lost.lostAt)
      const span = tracer.startSpan(
        `process ${queueOf(lost.algorithm)}`,
        { kind: SpanKind.CONSUMER, startTime, attributes },
        parent,
      )
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'worker lost' })
      span.end(lost.lostAt)
    },

    ended(job, end) {
      const key = runKey(job.id, job.attempt)
      const ran = runs.get(key)
      runs.delete(key)
      return context.with(ran ?? storedContext(job.trace), end)
    },

    async attempt(stored, webhook, send) {
      const parent = storedContext(stored)
      const span = tracer.startSpan(
        'webhook attempt',
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            'algoserve.job.id': webhook.jobId,
            'algoserve.webhook.id': webhook.webhookId,
            'algoserve.webhook.attempt': webhook.attempt,
          },
        },
        parent,
      )
      try {
        // The HTTP client span (undici's instrumentation) is its child and sends `traceparent`.
        const attempted = await context.with(trace.setSpan(parent, span), send)
        span.setAttribute('algoserve.webhook.outcome', attempted.kind)
        if (attempted.kind === 'retry' || attempted.kind === 'failed')
          span.setStatus({ code: SpanStatusCode.ERROR })
        return attempted
      } catch (error) {
        failed(span, error)
        throw error
      } finally {
        span.end()
      }
    },

    carrier: () => carrierOf(context.active()),
  }
}
