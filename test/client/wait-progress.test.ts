// `algoserve jobs wait` following GET /jobs/{job_id}/events, as a child process against a real service on
// each job backend, with a process algorithm that reports progress at each step
// (test/fixtures/stepping-process): lines that rise when stderr is not a terminal, a bar redrawn with \r
// (asked for, and chosen by itself on a real terminal under util-linux's `script`), nothing but the JSON
// with --json, the timeout's exit 4, and a stream cut by the network opened again with its Last-Event-ID.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { type AddressInfo, connect, createServer, type Server } from 'node:net'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { cli } from '../helpers/cli.js'
import { createJob } from '../helpers/jobs.js'

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
 * A TCP relay to the service that cuts the first connection once the service has sent a progress event
 * over it, as a proxy or a network may cut a long response; it keeps the requests it relayed.
 */
async function cuttingRelay(
  port: number,
): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = []
  let cut = false
  const server: Server = createServer((client) => {
    const index = requests.push('') - 1
    const upstream = connect(port, '127.0.0.1')
    client.on('data', (chunk) => {
      requests[index] += chunk.toString('latin1')
      upstream.write(chunk)
    })
    upstream.on('data', (chunk) => {
      client.write(chunk)
      if (!cut && chunk.toString('utf8').includes('event: progress')) {
        cut = true
        client.destroy()
        upstream.destroy()
      }
    })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
    client.on('error', () => {})
    upstream.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const relayPort = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${relayPort}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

forEachBackend((backend) => {
  let server: TestApp
  before(async () => {
    server = await backend.start({ algorithms: [STEPPING] })
  })
  after(() => server.close())

  /**
   * A Stepping job of `steps` steps of `stepMs` each (the service shows at most 4 progresses a second).
   * The jobs whose progress the CLI must see last several seconds: the CLI starts through tsx, which on a
   * loaded machine took more than 3 s, and then saw the job only at its end.
   */
  const submit = async (steps: number, stepMs: number) => {
    const created = await createJob(server.url, { algorithm: 'Stepping', params: { steps, step_ms: stepMs } })
    assert.equal(created.status, 202)
    return String(created.json.job_id)
  }

  test('not on a terminal: a line each time the percentage changes, rising, then the job', async () => {
    const id = await submit(8, 800)
    const run = await cli(['jobs', 'wait', id, '--timeout', '30', '--url', server.url])
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

  test('--progress bar: one line redrawn with \\r, cleared before the job is printed', async () => {
    const id = await submit(8, 800)
    const run = await cli(['jobs', 'wait', id, '--progress', 'bar', '--timeout', '30', '--url', server.url])
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
  }, async () => {
    const id = await submit(6, 800)
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
      server.url,
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

  test('--json: no progress at all, only the job as GET /jobs/{job_id} sends it', async () => {
    const id = await submit(4, 300)
    const run = await cli(['jobs', 'wait', id, '--json', '--timeout', '30', '--url', server.url])
    assert.equal(run.code, 0, run.stderr)
    assert.equal(run.stderr, '')
    const direct = await (await fetch(`${server.url}/jobs/${id}`)).text()
    assert.equal(run.stdout, `${direct}\n`)
  })

  test('the timeout: exit 4 with the state seen, after the progress so far', async () => {
    const id = await submit(100, 300)
    const run = await cli(['jobs', 'wait', id, '--timeout', '2', '--url', server.url])
    assert.equal(run.code, 4, run.stderr)
    assert.match(run.stdout, /^status +running$/m)
    assert.match(run.stderr, /still running after 2 s/)
    assert.ok(percents(run.stderr).length >= 1, run.stderr)
    await fetch(`${server.url}/jobs/${id}/cancel`, { method: 'POST' })
  })
  test('a stream cut by the network: opened again with its Last-Event-ID, the progress going on from there', async () => {
    const relay = await cuttingRelay(Number(new URL(server.url).port))
    try {
      const id = await submit(10, 600)
      const run = await cli(['jobs', 'wait', id, '--timeout', '30', '--url', relay.url])
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stdout, /^status +completed$/m)
      const streams = relay.requests.filter((head) => head.startsWith(`GET /jobs/${id}/events `))
      assert.ok(streams.length >= 2, relay.requests.join('\n---\n'))
      assert.doesNotMatch(streams[0] as string, /^last-event-id:/im)
      assert.match(streams[1] as string, /^last-event-id: \S+\r$/im)
      assert.ok(rising(percents(run.stderr)), run.stderr)
    } finally {
      await relay.close()
    }
  })
})
