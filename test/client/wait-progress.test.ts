// `algoserve jobs wait` following GET /jobs/{job_id}/events, as a child process against a real service on
// each job backend, with a process algorithm that reports progress at each step
// (test/fixtures/stepping-process), each job held until the CLI's event stream is open: lines that rise when
// stderr is not a terminal, a bar redrawn with \r (asked for, and chosen by itself on a real terminal under
// util-linux's `script`), nothing but the JSON with --json, the timeout's exit 4, and a stream cut by the
// network opened again with its Last-Event-ID.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, type TestContext, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { cli } from '../helpers/cli.js'
import { createJob } from '../helpers/jobs.js'
import { tcpRelay } from '../helpers/tcp-relay.js'

const STEPPING = fileURLToPath(new URL('../fixtures/stepping-process', import.meta.url))
const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url))
const SCRIPT = '/usr/bin/script'

/** The percentages of `running N% step i of n` lines, in order. */
const percents = (text: string) =>
  [...text.matchAll(/running (\d+)% step \d+ of \d+/g)].map((m) => Number(m[1]))

/** Terminal output with its erase-to-end-of-line sequence (ESC [ K) written as `<EL>`. */
const visible = (text: string) => text.replaceAll('\u001b[K', '<EL>')

const rising = (values: number[]) => values.every((value, i) => i === 0 || value > (values[i - 1] as number))

/**
 * A relay to the service that keeps the requests it relayed and calls `onEvents` once a request for a
 * job's event stream has passed. With `cut`, it cuts the first connection once the service has sent a
 * progress event over it, as a proxy or a network may cut a long response.
 */
async function relay(
  port: number,
  { onEvents, cut = false }: { onEvents: () => void; cut?: boolean },
): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = []
  let cutDone = false
  const through = await tcpRelay(port, {
    onClientData: (n, chunk) => {
      requests[n] = (requests[n] ?? '') + chunk.toString('latin1')
      if (/^GET \/jobs\/\S+\/events /.test(requests[n] as string)) onEvents()
    },
    onUpstreamData: (chunk, cutConnection) => {
      if (cut && !cutDone && chunk.toString('utf8').includes('event: progress')) {
        cutDone = true
        cutConnection()
      }
    },
  })
  return { url: `http://127.0.0.1:${through.port}`, requests, close: through.close }
}

forEachBackend((backend) => {
  let server: TestApp
  before(async () => {
    server = await backend.start({ algorithms: [STEPPING] })
  })
  after(() => server.close())

  let goFiles: string
  before(() => {
    goFiles = mkdtempSync(join(tmpdir(), 'algoserve-go-'))
  })
  after(() => rmSync(goFiles, { recursive: true, force: true }))

  /**
   * A Stepping job of `steps` steps of `stepMs` each (the service shows at most 4 progresses a second),
   * held before its first step; and the URL of a relay to the service that lets it go once the CLI's
   * event stream is open. The CLI starts through tsx, which on a loaded machine took seconds: a job that
   * went at once was seen only at its end.
   */
  const held = async (t: TestContext, steps: number, stepMs: number, cut = false) => {
    const goFile = join(goFiles, randomUUID())
    const created = await createJob(server.url, {
      algorithm: 'Stepping',
      params: { steps, step_ms: stepMs, go_file: goFile },
    })
    assert.equal(created.status, 202)
    const go = () => writeFileSync(goFile, '')
    const through = await relay(Number(new URL(server.url).port), { onEvents: go, cut })
    t.after(() => through.close())
    return { id: String(created.json.job_id), url: through.url, requests: through.requests }
  }

  test('not on a terminal: a line each time the percentage changes, rising, then the job', async (t) => {
    const { id, url } = await held(t, 8, 300)
    const run = await cli(['jobs', 'wait', id, '--timeout', '30', '--url', url])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /^status +completed$/m)
    assert.match(run.stdout, /^result\.steps +8$/m)
    const lines = run.stderr.split('\n').filter((line) => line !== '')
    for (const line of lines) assert.match(line, /^(pending|running|running \d+% step \d+ of 8)$/)
    const seen = percents(run.stderr)
    assert.ok(seen.length >= 2, run.stderr)
    assert.ok(rising(seen), run.stderr)
    assert.doesNotMatch(visible(run.stderr), /\r|<EL>/)
    assert.ok(!run.stderr.includes('\u001b'))
  })

  test('--progress bar: one line redrawn with \\r, cleared before the job is printed', async (t) => {
    const { id, url } = await held(t, 8, 300)
    const run = await cli(['jobs', 'wait', id, '--progress', 'bar', '--timeout', '30', '--url', url])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /^status +completed$/m)
    assert.doesNotMatch(run.stderr, /\n/)
    const bars = [...visible(run.stderr).matchAll(/\r\[([#·]{20})\] +(\d+)% {2}step \d+ of 8<EL>/g)]
    assert.ok(bars.length >= 2, JSON.stringify(run.stderr))
    const values = bars.map((m) => Number(m[2]))
    assert.ok(rising(values), JSON.stringify(run.stderr))
    // The bar's fill follows the percentage.
    for (const m of bars) assert.equal((m[1] as string).split('#').length - 1, Math.round(Number(m[2]) / 5))
    assert.ok(visible(run.stderr).endsWith('\r<EL>'), JSON.stringify(run.stderr.slice(-40)))
  })

  test('on a terminal (under script): the bar by itself, then the job', {
    skip: !existsSync(SCRIPT) && `no ${SCRIPT}`,
  }, async (t) => {
    const { id, url } = await held(t, 6, 300)
    const command = [
      process.execPath,
      '--import',
      'tsx',
      MAIN,
      'jobs',
      'wait',
      id,
      '--timeout',
      '30',
      '--url',
      url,
    ]
    const quoted = command.map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ')
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('ALGOSERVE_')),
    )
    // script runs the command on a terminal of its own and copies what it shows to stdout.
    const shown = await new Promise<{ code: number | null; text: string }>((resolve) => {
      execFile(SCRIPT, ['-qec', quoted, '/dev/null'], { env: clean, timeout: 60_000 }, (error, stdout) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
          text: stdout,
        }),
      )
    })
    assert.equal(shown.code, 0, shown.text)
    const bars = [...shown.text.matchAll(/\r\[[#·]{20}\] +(\d+)% {2}step \d+ of 6/g)].map((m) => Number(m[1]))
    assert.ok(bars.length >= 2, JSON.stringify(shown.text))
    assert.ok(rising(bars), JSON.stringify(shown.text))
    assert.match(visible(shown.text), /\r<EL>job /)
    assert.match(shown.text, /status +completed/)
  })

  test('--json: no progress at all, only the job as GET /jobs/{job_id} sends it', async (t) => {
    const { id, url } = await held(t, 4, 300)
    const run = await cli(['jobs', 'wait', id, '--json', '--timeout', '30', '--url', url])
    assert.equal(run.code, 0, run.stderr)
    assert.equal(run.stderr, '')
    const direct = await (await fetch(`${server.url}/jobs/${id}`)).text()
    assert.equal(run.stdout, `${direct}\n`)
  })

  test('the timeout: exit 4 with the state seen, after the progress so far', async (t) => {
    const { id, url } = await held(t, 100, 300)
    const run = await cli(['jobs', 'wait', id, '--timeout', '2', '--url', url])
    assert.equal(run.code, 4, run.stderr)
    assert.match(run.stdout, /^status +running$/m)
    assert.match(run.stderr, /still running after 2 s/)
    assert.ok(percents(run.stderr).length >= 1, run.stderr)
    await fetch(`${server.url}/jobs/${id}/cancel`, { method: 'POST' })
  })
  test('a stream cut by the network: opened again with its Last-Event-ID, the progress going on from there', async (t) => {
    const { id, url, requests } = await held(t, 10, 300, true)
    const run = await cli(['jobs', 'wait', id, '--timeout', '30', '--url', url])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /^status +completed$/m)
    const streams = requests.filter((head) => head.startsWith(`GET /jobs/${id}/events `))
    assert.ok(streams.length >= 2, requests.join('\n---\n'))
    assert.doesNotMatch(streams[0] as string, /^last-event-id:/im)
    assert.match(streams[1] as string, /^last-event-id: \S+\r$/im)
    assert.ok(rising(percents(run.stderr)), run.stderr)
  })
})
