// The runtime's metrics (process_*, nodejs_*): prom-client's default set, all but two kinds of series.
// - nodejs_gc_duration_seconds: its PerformanceObserver makes Node build an entry and call back on every
//   garbage collection; with main.ts's 1 MB young generation that came to about 7% of a small /invoke's
//   CPU time (docs/benchmarks/invoke.md, runs of 2026-11-22 00:04 to 00:40 UTC). It also kept only the
//   first entry of each batch, so it undercounted.
// - the three gauges ending in _total, which `promtool check metrics` rejects; their per-type twins
//   without the suffix (nodejs_active_handles, ...) stay.
// prom-client has no switch for one default metric, so its collectors are called one by one; they sit
// in its lib/metrics folder (prom-client is pinned in package.json, and test/routes/metrics.test.ts
// checks the series that must be there).
import type { Registry } from 'prom-client'
import eventLoopLag from 'prom-client/lib/metrics/eventLoopLag.js'
import heapSizeAndUsed from 'prom-client/lib/metrics/heapSizeAndUsed.js'
import heapSpacesSizeAndUsed from 'prom-client/lib/metrics/heapSpacesSizeAndUsed.js'
import osMemoryHeap from 'prom-client/lib/metrics/osMemoryHeap.js'
import processCpuTotal from 'prom-client/lib/metrics/processCpuTotal.js'
import processHandles from 'prom-client/lib/metrics/processHandles.js'
import processMaxFileDescriptors from 'prom-client/lib/metrics/processMaxFileDescriptors.js'
import processOpenFileDescriptors from 'prom-client/lib/metrics/processOpenFileDescriptors.js'
import processRequests from 'prom-client/lib/metrics/processRequests.js'
import processResources from 'prom-client/lib/metrics/processResources.js'
import processStartTime from 'prom-client/lib/metrics/processStartTime.js'
import version from 'prom-client/lib/metrics/version.js'

const COLLECTORS = [
  processCpuTotal,
  processStartTime,
  osMemoryHeap,
  processOpenFileDescriptors,
  processMaxFileDescriptors,
  eventLoopLag,
  processResources,
  processHandles,
  processRequests,
  heapSizeAndUsed,
  heapSpacesSizeAndUsed,
  version,
]

const REJECTED_BY_PROMTOOL = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
]

export function registerProcessMetrics(registry: Registry): void {
  // The options collectDefaultMetrics would pass them.
  for (const collect of COLLECTORS) collect(registry, { eventLoopMonitoringPrecision: 10 })
  for (const name of REJECTED_BY_PROMTOOL) registry.removeSingleMetric(name)
  // prom-client leaves it out of a merge of several processes; the service started with the first.
  const started = registry.getSingleMetric('process_start_time_seconds')
  if (started !== undefined) (started as unknown as { aggregator: string }).aggregator = 'min'
}
