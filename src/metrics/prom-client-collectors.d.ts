// Types for the default-metric collectors of prom-client 15 that process-metrics.ts calls one by one.
declare module 'prom-client/lib/metrics/*.js' {
  import type { Registry } from 'prom-client'

  const collect: (registry: Registry, config: { eventLoopMonitoringPrecision?: number }) => void
  export default collect
}
