import assert from 'node:assert/strict'
import { test } from 'node:test'
import { tracingWanted } from '../../src/tracing/wanted.js'

test('tracing is wanted only with an OTLP endpoint, and not when the SDK is disabled', () => {
  assert.equal(tracingWanted({}), false)
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }), false)
  assert.equal(tracingWanted({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }), false)
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true)
  assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true)
  assert.equal(
    tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' }),
    false,
  )
  assert.equal(
    tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' }),
    true,
  )
})
