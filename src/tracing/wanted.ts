// Whether this process traces: only when the OpenTelemetry SDK's own variables ask for an OTLP
// endpoint, and OTEL_SDK_DISABLED does not say no. Reads the environment only: deciding loads no
// OpenTelemetry module, so a process that does not trace loads none (docs/tracing.md).

export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  const set = (name: string) => (env[name]?.trim() ?? '') !== ''
  return set('OTEL_EXPORTER_OTLP_ENDPOINT') || set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')
}
