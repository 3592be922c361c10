// A real OTLP/HTTP trace receiver on a loopback port: accepts POST /v1/traces in JSON or in protobuf
// (decoded with protobufjs from the fields of the OTLP trace protocol that the tests read) and keeps
// every span it was sent, flattened, with ids as lowercase hex.
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import protobuf from 'protobufjs'
import { until } from './time.js'

export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  startTimeUnixNano: string
  endTimeUnixNano: string
  attributes: Record<string, string | number | boolean>
  /** The status code: 0 unset, 1 ok, 2 error. */
  status: number
  statusMessage: string
  service: string
  /** How it came: 'application/json' or 'application/x-protobuf'. */
  contentType: string
}

export interface OtlpReceiver {
  /** The OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT): the receiver takes `${url}/v1/traces`. */
  url: string
  spans: ReceivedSpan[]
  /** The other requests it was sent (refused with 404), as `METHOD path`: metrics or logs, say. */
  refused: string[]
  /** Resolves once a span passes `test`; gives it. */
  waitForSpan(test: (span: ReceivedSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan>
  close(): Promise<void>
}

// The part of opentelemetry/proto/collector/trace/v1 and its messages that the tests read.
const PROTO = `syntax = "proto3";
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3;
  double double_value = 4; } }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Span { bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5;
  int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; Status status = 15; }
message ScopeSpans { repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }`
const Request = protobuf.parse(PROTO, { keepCase: false }).root.lookupType('ExportTraceServiceRequest')

type Value = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number }
type KeyValues = { key: string; value?: Value }[] | undefined
interface RequestShape {
  resourceSpans?: {
    resource?: { attributes?: KeyValues }
    scopeSpans?: {
      spans?: {
        traceId: string
        spanId: string
        parentSpanId?: string
        name: string
        kind?: number
        startTimeUnixNano: string
        endTimeUnixNano: string
        attributes?: KeyValues
        status?: { code?: number; message?: string }
      }[]
    }[]
  }[]
}

function attributesOf(list: KeyValues): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {}
  for (const { key, value } of list ?? []) {
    if (value === undefined) continue
    if (value.stringValue !== undefined) out[key] = value.stringValue
    else if (value.boolValue !== undefined) out[key] = value.boolValue
    else if (value.intValue !== undefined) out[key] = Number(value.intValue)
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue
  }
  return out
}

function decode(body: Buffer, contentType: string): RequestShape {
  if (contentType.startsWith('application/json')) return JSON.parse(body.toString('utf8')) as RequestShape
  // Bytes as hex and 64-bit integers as strings: what the JSON encoding of OTLP gives too.
  return Request.toObject(Request.decode(body), {
    bytes: String,
    longs: String,
    defaults: false,
  }) as RequestShape
}

const hex = (id: string | undefined): string =>
  id === undefined || id === '' ? '' : /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex')

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = []
  const refused: string[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const contentType = request.headers['content-type'] ?? ''
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        refused.push(`${request.method} ${request.url}`)
        response.writeHead(404).end()
        return
      }
      const decoded = decode(Buffer.concat(chunks), contentType)
      for (const resourceSpans of decoded.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '')
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: hex(span.parentSpanId),
              name: span.name,
              kind: span.kind ?? 0,
              startTimeUnixNano: String(span.startTimeUnixNano),
              endTimeUnixNano: String(span.endTimeUnixNano),
              attributes: attributesOf(span.attributes),
              status: span.status?.code ?? 0,
              statusMessage: span.status?.message ?? '',
              service,
              contentType,
            })
      }
      response
        .writeHead(200, { 'content-type': contentType })
        .end(contentType.startsWith('application/json') ? '{}' : '')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    refused,
    async waitForSpan(test, timeoutMs = 30_000) {
      await until(() => spans.some(test), timeoutMs, 'a span that the test waits for', 20)
      return spans.find(test) as ReceivedSpan
    },
    close: async () => {
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
}
