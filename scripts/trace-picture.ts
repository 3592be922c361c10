// Draws one job's real trace as a waterfall, for docs/tracing.md: runs `algoserve serve` with tracing
// on, exporting to the tests' OTLP receiver, sends one job whose webhook is refused once (so that it is
// attempted twice), waits for every span of its trace and writes them as an SVG, one row per span in
// tree order, its bar on the trace's time axis. With --taken-over, the service is killed (SIGKILL) while
// the job runs and started again on its data directory, which records the lost run and runs it again.
// Run: npx tsx scripts/trace-picture.ts [--taken-over] [output.svg]
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { RSA_100 } from '../test/helpers/numbers.js'
import { type ReceivedSpan, startOtlpReceiver } from '../test/helpers/otlp-receiver.js'
import { startReceiver } from '../test/helpers/receiver.js'
import { until } from '../test/helpers/time.js'

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const TAKEN_OVER = process.argv.includes('--taken-over')
const OUTPUT =
  process.argv.slice(2).find((arg) => !arg.startsWith('--')) ??
  fileURLToPath(
    new URL(`../docs/images/${TAKEN_OVER ? 'job-trace-taken-over' : 'job-trace'}.svg`, import.meta.url),
  )
// A client's trace, continued by the service.
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
// 100000000000031 × 300000000000089: a run long enough to be seen beside the request. Taken over, a
// 100-digit semiprime, whose factoring runs for the whole budget: killed in its first run, cut short by
// a shorter budget in its second (RSA-100).
const NUMBER = TAKEN_OVER ? RSA_100 : '30000000000018200000000002759'

const KINDS = ['', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER']
const COLOURS: Record<string, string> = {
  SERVER: '#4e79a7',
  PRODUCER: '#59a14f',
  INTERNAL: '#9c9c9c',
  CONSUMER: '#f28e2b',
  CLIENT: '#76b7b2',
}
const ERROR_COLOUR = '#e15759'

/** `algoserve serve` exporting its spans to `endpoint`; resolves with its URL once it listens. */
async function serve(
  endpoint: string,
  dataDir: string,
  budgetMs: number,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', MAIN, 'serve', '--data-dir', dataDir, '--port', '0'],
    {
      env: {
        ...process.env,
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '50',
        ALGOSERVE_WEBHOOK_ALLOW_PRIVATE: 'true',
        ALGOSERVE_DRAIN_DELAY_MS: '0',
        ALGOSERVE_JOB_FACTOR_BUDGET_MS: String(budgetMs),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8')
  })
  const url = await until(
    () => /Server listening at (http:\/\/127\.0\.0\.1:[0-9]+)/.exec(output)?.[1],
    60_000,
    () => `the service listening:\n${output}`,
  )
  return { child, url }
}

interface Row {
  span: ReceivedSpan
  depth: number
}

/** The spans as rows of their tree, each parent before its children, siblings by start. */
function rows(spans: ReceivedSpan[]): Row[] {
  const ids = new Set(spans.map((span) => span.spanId))
  const byStart = (a: ReceivedSpan, b: ReceivedSpan) =>
    BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1
  const children = (parent: string) => spans.filter((span) => span.parentSpanId === parent).sort(byStart)
  const out: Row[] = []
  const visit = (span: ReceivedSpan, depth: number) => {
    out.push({ span, depth })
    for (const child of children(span.spanId)) visit(child, depth + 1)
  }
  for (const root of spans.filter((span) => !ids.has(span.parentSpanId)).sort(byStart)) visit(root, 0)
  return out
}

const xml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;')

const formatMs = (ms: number) =>
  ms >= 100 ? `${Math.round(ms)} ms` : ms >= 1 ? `${ms.toFixed(1)} ms` : `${Math.round(ms * 1000)} µs`

/** What a row says after its name: the attributes that tell its spans apart. */
function detail(span: ReceivedSpan): string {
  const a = span.attributes
  if (a['algoserve.job.attempt'] !== undefined)
    return `attempt ${a['algoserve.job.attempt']}, ${a['algoserve.job.outcome'] ?? ''}`
  if (a['algoserve.webhook.attempt'] !== undefined)
    return `attempt ${a['algoserve.webhook.attempt']}, ${a['algoserve.webhook.outcome'] ?? ''}`
  const status = a['http.response.status_code']
  const path = a['url.path'] ?? a['http.target']
  return [path, status === undefined ? undefined : `HTTP ${status}`].filter(Boolean).join(' ')
}

function svg(spans: ReceivedSpan[], title: string): string {
  const list = rows(spans)
  const nanos = (value: string) => Number(BigInt(value) - BigInt(spans[0]?.startTimeUnixNano ?? '0')) / 1e6
  const start = Math.min(...spans.map((span) => nanos(span.startTimeUnixNano)))
  const end = Math.max(...spans.map((span) => nanos(span.endTimeUnixNano)))
  const total = end - start
  const [labelWidth, barWidth, rowHeight, top] = [360, 620, 28, 56]
  const width = labelWidth + barWidth + 110
  const height = top + list.length * rowHeight + 36
  const x = (ms: number) => labelWidth + ((ms - start) / total) * barWidth
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Verdana, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="14" font-weight="bold">${xml(title)}</text>`,
  ]
  // The time axis: ticks at round steps over the trace's length.
  const step =
    [1, 2, 5, 10, 20, 50, 100, 200, 250, 500, 1000, 2000, 5000].find((s) => total / s <= 8) ?? 10_000
  for (let tick = 0; tick <= total; tick += step) {
    const at = x(start + tick).toFixed(1)
    parts.push(`<line x1="${at}" y1="${top - 8}" x2="${at}" y2="${height - 30}" stroke="#e6e6e6"/>`)
    parts.push(
      `<text x="${at}" y="${top - 12}" text-anchor="middle" fill="rgb(102,102,102)">${tick} ms</text>`,
    )
  }
  list.forEach(({ span, depth }, i) => {
    const y = top + i * rowHeight
    const kind = KINDS[span.kind] ?? ''
    const from = nanos(span.startTimeUnixNano)
    const to = nanos(span.endTimeUnixNano)
    const colour = span.status === 2 ? ERROR_COLOUR : (COLOURS[kind] ?? '#9c9c9c')
    if (i % 2 === 1)
      parts.push(`<rect x="0" y="${y}" width="${width}" height="${rowHeight}" fill="#f7f7f7"/>`)
    parts.push(
      `<text x="${12 + depth * 16}" y="${y + 13}">${xml(span.name)}</text>`,
      `<text x="${12 + depth * 16}" y="${y + 24}" font-size="10" fill="rgb(102,102,102)">${xml([kind, detail(span)].filter(Boolean).join(' · '))}</text>`,
      `<rect x="${x(from).toFixed(1)}" y="${y + 6}" width="${Math.max(2, x(to) - x(from)).toFixed(1)}" height="${rowHeight - 12}" rx="2" fill="${colour}"/>`,
      `<text x="${(Math.max(x(to), x(from) + 2) + 6).toFixed(1)}" y="${y + 18}" fill="rgb(51,51,51)">${xml(formatMs(to - from))}</text>`,
    )
  })
  const legend: [string, string][] = [...Object.entries(COLOURS), ['ERROR status', ERROR_COLOUR]]
  legend.forEach(([name, colour], i) => {
    const at = 12 + i * 130
    parts.push(
      `<rect x="${at}" y="${height - 22}" width="12" height="12" rx="2" fill="${colour}"/>`,
      `<text x="${at + 18}" y="${height - 12}" fill="rgb(51,51,51)">${xml(name)}</text>`,
    )
  })
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}

const otlp = await startOtlpReceiver()
// The first attempt is refused, the second delivered (the first retry comes a second later).
const hooks = await startReceiver((n) => (n === 0 ? 503 : 204))
const dataDir = mkdtempSync(join(tmpdir(), 'algoserve-trace-picture-'))
let { child, url } = await serve(otlp.url, dataDir, 20_000)
try {
  const created = await fetch(`${url}/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
    body: JSON.stringify({ algorithm: 'PrimeChecker', params: { number: NUMBER }, webhook: hooks.url }),
  })
  if (created.status !== 202) throw new Error(`POST /jobs answered ${created.status}`)
  const { job_id: id } = (await created.json()) as { job_id: string }
  if (TAKEN_OVER) {
    // Killed a second into its run, once the spans so far are exported; started again with a budget
    // that ends the run that takes over.
    await until(
      async () =>
        ((await (await fetch(`${url}/jobs/${id}`)).json()) as { status: string }).status === 'running',
      30_000,
    )
    const exported = (kind: number) =>
      otlp.spans.some((span) => span.traceId === TRACE_ID && span.kind === kind)
    // The request (SERVER) and the wait (INTERNAL) spans have ended: they are out before the kill.
    await until(() => exported(2) && exported(1), 30_000, 'the spans so far exported')
    await new Promise((resolve) => setTimeout(resolve, 1000))
    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))
    ;({ child, url } = await serve(otlp.url, dataDir, 1000))
  }
  await hooks.waitFor(2, 60_000)
  // The last span to end is the second attempt's: its client span is its child.
  const ofTrace = () => otlp.spans.filter((span) => span.traceId === TRACE_ID)
  await until(
    () =>
      ofTrace().filter((span) => span.kind === 3).length >= 2 &&
      ofTrace().filter((span) => span.name === 'webhook attempt').length >= 2,
    30_000,
    'both webhook attempts and their requests exported',
  )
  const spans = ofTrace().sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1))
  const title = TAKEN_OVER
    ? `A job's trace, its first run lost with its process (SIGKILL) and taken over at the restart`
    : `One job's trace, from the client's request to its webhook's second attempt`
  writeFileSync(OUTPUT, svg(spans, title))
  console.log(`${spans.length} spans of trace ${TRACE_ID} drawn in ${OUTPUT}`)
} finally {
  child.kill('SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
  await otlp.close()
  await hooks.close()
  rmSync(dataDir, { recursive: true, force: true })
}
