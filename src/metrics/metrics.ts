// The nine metrics of the interface, the service's own (jobs waiting, running and cancelled, readiness,
// the build, the webhook receivers' pace) and the runtime's process metrics (process-metrics.ts), all listed
// in docs/metrics.md, in a registry of their own so that each app (and each test) counts separately. The four
// counted on every request are label-bound series (metric-series.ts); the rest are prom-client's own.
import { Counter, Gauge, Registry } from 'prom-client'
import { VERSION } from '../version.js'
import { LabelledCounter, LabelledHistogram } from './metric-series.js'
import { registerProcessMetrics } from './process-metrics.js'
import { registerReceiverMetrics } from './receiver-metrics.js'

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

/** The `endpoint` label of a request that matched no route. */
export const UNMATCHED_ENDPOINT = 'none'

// Sub-millisecond buckets: a small /invoke is answered in well under 1 ms.
const HTTP_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]
const ALGORITHM_BUCKETS = [
  0.00001, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
]

/** Where the job gauges read their values: the job backend, at each scrape. */
export type JobCountSource = () => Promise<{
  byAlgorithm: ReadonlyMap<string, { waiting: number; running: number }>
}>

/** Whether this process can serve now (what /readyz would answer), asked at each scrape. */
export type ReadinessSource = () => Promise<boolean>

export function createMetrics() {
  const registry = new Registry()
  registerProcessMetrics(registry)
  const registers = [registry]
  let source: JobCountSource | undefined
  // Every algorithm the gauges have shown, and those loaded here: each has its series, 0 when no job of
  // it waits or runs, NaN while the store cannot be read.
  const shown = new Set<string>()
  let readiness: ReadinessSource | undefined
  // One read of the backend serves both gauges of a scrape (their collects run together).
  let reading: ReturnType<JobCountSource> | undefined
  const read = () => {
    if (source === undefined) return undefined
    reading ??= source().finally(() => {
      reading = undefined
    })
    return reading
  }
  // A scrape while the backend cannot be read reports NaN, Prometheus' unknown: the last values would
  // show a backlog that nobody can see (and raise or hold alerts on it). `max` over the processes
  // skips a NaN, so one process cut off from the store hides nothing the others can read.
  // With several HTTP processes, each reads the same store: the service's value is theirs (the largest).
  const jobGauge = (name: string, help: string, key: 'waiting' | 'running') =>
    new Gauge({
      name,
      help,
      labelNames: ['algorithm'] as const,
      registers,
      aggregator: 'max',
      async collect() {
        const counts = await read()?.catch(() => undefined)
        for (const algorithm of counts?.byAlgorithm.keys() ?? []) shown.add(algorithm)
        this.reset()
        for (const algorithm of shown) {
          const value = counts === undefined ? Number.NaN : (counts.byAlgorithm.get(algorithm)?.[key] ?? 0)
          this.set({ algorithm }, value)
        }
      },
    })
  // Constant 1, the facts in labels: join on it to see which version each instance runs.
  new Gauge({
    name: 'algoserve_build_info',
    help: 'The running build: service version and Node.js version; always 1.',
    labelNames: ['version', 'node_version'] as const,
    registers,
    aggregator: 'first',
  }).set({ version: VERSION, node_version: process.version }, 1)
  const showReceivers = registerReceiverMetrics(registers)
  let merged: (() => Promise<string>) | undefined
  return {
    registry,
    /** The whole service's exposition when this process is one of several HTTP processes; else undefined. */
    get merged() {
      return merged
    },
    /** Makes a scrape of this process answer `source`'s text: every HTTP process's metrics, merged. */
    mergeWith(source: () => Promise<string>) {
      merged = source
    },
    /** Makes the webhook receiver gauges read each receiver's pace at each scrape. */
    showReceivers,
    /** Makes the job gauges read `counts` at each scrape, with a series for each of `algorithms` at least. */
    countJobsWith(counts: JobCountSource, algorithms: readonly string[] = []) {
      source = counts
      for (const algorithm of algorithms) shown.add(algorithm)
    },
    /** Makes algoserve_ready ask `ready` at each scrape. */
    readinessFrom(ready: ReadinessSource) {
      readiness = ready
    },
    jobsWaiting: jobGauge(
      'jobs_waiting',
      'Jobs waiting to run, by algorithm (in distributed mode, of every process: the same on each); NaN while the job store cannot be read.',
      'waiting',
    ),
    jobsRunning: jobGauge(
      'jobs_running',
      'Jobs running, by algorithm (in distributed mode, on every worker: the same on each process); NaN while the job store cannot be read.',
      'running',
    ),
    // Readiness as a series, so that an alert needs no prober of /readyz (compose has none).
    ready: new Gauge({
      name: 'algoserve_ready',
      help: 'Whether this process is ready (what /readyz answers): 1, or 0 when a check fails or a shutdown has begun.',
      registers,
      // Of several HTTP processes, the service is ready when every one is.
      aggregator: 'min',
      async collect() {
        if (readiness === undefined) return
        this.set((await readiness().catch(() => false)) ? 1 : 0)
      },
    }),
    httpRequests: new LabelledCounter({
      name: 'http_requests_total',
      help: 'HTTP requests.',
      labelNames: ['method', 'endpoint', 'status'] as const,
      registers,
    }),
    httpDuration: new LabelledHistogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency in seconds.',
      labelNames: ['method', 'endpoint'] as const,
      buckets: HTTP_BUCKETS,
      registers,
    }),
    httpInProgress: new Gauge({
      name: 'http_requests_in_progress',
      help: 'HTTP requests in progress.',
      registers,
    }),
    algorithmExecutions: new LabelledCounter({
      name: 'algorithm_executions_total',
      help: 'Algorithm executions, by outcome: success, error, or invalid_params (it refused its params).',
      labelNames: ['algorithm', 'status'] as const,
      registers,
    }),
    versionExecutions: new LabelledCounter({
      name: 'algorithm_version_executions_total',
      help: 'Algorithm executions by version: algorithm_executions_total with the version that ran (a canary split read by version).',
      labelNames: ['algorithm', 'version', 'status'] as const,
      registers,
    }),
    algorithmDuration: new LabelledHistogram({
      name: 'algorithm_execution_duration_seconds',
      help: 'Algorithm execution latency in seconds.',
      labelNames: ['algorithm'] as const,
      buckets: ALGORITHM_BUCKETS,
      registers,
    }),
    jobsCreated: new Counter({
      name: 'jobs_created_total',
      help: 'Jobs created.',
      labelNames: ['algorithm'] as const,
      registers,
    }),
    jobsCancelled: new Counter({
      name: 'jobs_cancelled_total',
      help: 'Jobs cancelled through POST /jobs/{job_id}/cancel (they also count as failed).',
      labelNames: ['algorithm'] as const,
      registers,
    }),
    jobsCompleted: new Counter({
      name: 'jobs_completed_total',
      help: 'Jobs finished, by status (completed or failed).',
      labelNames: ['algorithm', 'status'] as const,
      registers,
    }),
    // A label-bound series as the other two latencies are, for their exemplars (metric-series.ts).
    jobDuration: new LabelledHistogram({
      name: 'job_execution_duration_seconds',
      help: 'Job execution time in seconds.',
      labelNames: ['algorithm'] as const,
      buckets: ALGORITHM_BUCKETS,
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome (success, retry or failed).',
      labelNames: ['status'] as const,
      registers,
    }),
  }
}

export type Metrics = ReturnType<typeof createMetrics>
