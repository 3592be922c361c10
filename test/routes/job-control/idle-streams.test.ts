// GET /jobs/{job_id}/events with clients that do not read, on every job backend: many raw TCP clients
// follow a job whose end is large (test/fixtures/big-result) and never take it. They cost the service
// the one end they share, not a copy each, they are cut (with a log line saying which job and how far
// behind), and a client that reads among them still receives the whole end.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { bodyText, readEvents, type StreamEvent } from '../../../src/client/event-stream.js'
import type { TestApp } from '../../helpers/app.js'
import { forEachBackend } from '../../helpers/backends.js'
import { createJob } from '../../helpers/jobs.js'
import { until } from '../../helpers/time.js'

const BIG_RESULT = fileURLToPath(new URL('../../fixtures/big-result', import.meta.url))
const RESULT_BYTES = 8 * 1024 * 1024
const CLIENTS = 50
/**
 * How much higher the service's peak may be with its idle clients: twice the bound (1 MiB) each, and
 * room for what the garbage collector has not yet given back (tens of MB from one run to the next).
 */
const MAX_GROWTH = CLIENTS * 2 * 1024 * 1024 + 64 * 1024 * 1024

interface LogLine {
  msg: string
  job_id?: string
  behind_bytes?: number
}

/** A client that sends its request, reads the answer's head and first event, then never reads again. */
function idleClient(url: string, id: string): Promise<Socket> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(`GET /jobs/${id}/events HTTP/1.1\r\nhost: ${hostname}\r\n\r\n`),
    )
    let head = ''
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1')
      if (!head.includes('event: state')) return
      socket.off('data', onData)
      socket.pause()
      resolve(socket)
    }
    socket.on('data', onData)
    // A cut is a reset: what the client is told of it is not what these tests look at.
    socket.on('error', () => {})
    socket.once('close', () => reject(new Error(`closed before its first event: ${head}`)))
  })
}

async function collect(response: Response): Promise<StreamEvent[]> {
  const events: StreamEvent[] = []
  for await (const event of readEvents(bodyText(response.body as ReadableStream<Uint8Array>)))
    events.push(event)
  return events
}

forEachBackend((backend) => {
  const lines: LogLine[] = []
  let server: TestApp
  let dir: string
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'algoserve-idle-streams-'))
    server = await backend.start(
      { algorithms: [BIG_RESULT], logLevel: 'info' },
      { logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line)) } } },
    )
  })
  after(async () => {
    await server.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const submit = async (goFile?: string) => {
    const params = goFile === undefined ? { bytes: RESULT_BYTES } : { bytes: RESULT_BYTES, go_file: goFile }
    const created = await createJob(server.url, { algorithm: 'BigResult', params })
    assert.equal(created.status, 202)
    return created.json.job_id as string
  }

  /**
   * Runs a job with a large end followed by `idleCount` clients that do not read and one that reads,
   * until `done` holds once the end is out; returns the end the reader was sent and the service's peak
   * RSS meanwhile (the tests and the service share a process: the reader's copies are in both runs).
   */
  const follow = async (idleCount: number, done: (id: string) => Promise<unknown>) => {
    const goFile = join(dir, `go-${idleCount}`)
    const id = await submit(goFile)
    const idle = await Promise.all(Array.from({ length: idleCount }, () => idleClient(server.url, id)))
    const reader = fetch(`${server.url}/jobs/${id}/events`).then(collect)
    let peak = process.memoryUsage().rss
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 10)
    try {
      writeFileSync(goFile, '')
      const end = (await reader).at(-1)
      const body = await (await fetch(`${server.url}/jobs/${id}`)).text()
      await done(id)
      return { id, end, body, peak }
    } finally {
      clearInterval(sampler)
      for (const socket of idle) socket.destroy()
    }
  }

  const title = `${CLIENTS} clients that do not read a large end cost far less than a copy each, and are cut`
  test(title, { timeout: 120_000 }, async () => {
    // Once to warm up, once with no client that does not read: the peak of the same work without them.
    await follow(0, async () => {})
    const alone = await follow(0, async () => {})
    const cuts = (id: string) =>
      lines.filter((line) => line.job_id === id && /^cut an event stream/.test(line.msg))
    const idle = await follow(CLIENTS, (id) =>
      until(
        () => cuts(id).length >= CLIENTS,
        45_000,
        () => `${cuts(id).length} of ${CLIENTS} cut`,
        100,
      ),
    )

    // A client that reads is sent the whole end, however far over the bound the end alone is.
    assert.equal(idle.end?.event, 'end')
    assert.equal(idle.end?.data, idle.body, 'the end is the body of GET /jobs/{job_id}, intact')
    const result = (JSON.parse(idle.end?.data ?? '{}') as { result: { text: string } }).result
    assert.equal(result.text.length, RESULT_BYTES)

    // Each client that does not read is cut, and the cut is logged with its job and how far behind.
    assert.equal(cuts(idle.id).length, CLIENTS)
    for (const cut of cuts(idle.id)) assert.ok((cut.behind_bytes ?? 0) > 1024 * 1024, JSON.stringify(cut))

    const growth = idle.peak - alone.peak
    assert.ok(
      growth < MAX_GROWTH,
      `the service's peak was ${(growth / 2 ** 20).toFixed(0)} MB higher with ${CLIENTS} idle clients ` +
        `(bound ${MAX_GROWTH / 2 ** 20} MB; a copy each would be ${(CLIENTS * RESULT_BYTES) / 2 ** 20} MB)`,
    )
  })
})
