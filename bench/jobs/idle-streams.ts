// Event streams whose clients do not read a large end: the service's RSS with CLIENTS raw TCP clients
// that send GET /jobs/{job_id}/events, read its head and first event, and then read nothing while the
// job ends with a result of RESULT_MB. This checkout against another (the first argument, e.g. the main
// checkout), alternating, ROUNDS each; the service runs in a child process (idle-streams-server.ts).
// Each round: the RSS once the clients are attached (before the end), its peak over WATCH_S seconds
// after the end, and how many connections were gone (reset or closed) half a second after the clients
// read again: cut, or, where not cut, read to their end by then.
//
// `npm run bench:idle-streams -- OTHER_CHECKOUT` (= node --import tsx bench/jobs/idle-streams.ts <checkout>);
// CLIENTS=100 RESULT_MB=8 ROUNDS=3 WATCH_S=35.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { upperMedian } from '../lib/stats.js'

writeResultOnExit(
  'idle-streams',
  {
    title: 'event streams whose clients do not read',
    script: 'bench/jobs/idle-streams.ts',
    npm: 'npm run bench:idle-streams',
    history: 'docs/benchmarks/job-control.md',
    command: 'node --import tsx bench/jobs/idle-streams.ts',
  },
  ['CLIENTS', 'RESULT_MB', 'ROUNDS', 'WATCH_S'],
)

const other = process.argv[2]
if (other === undefined || other === '') throw new Error('usage: idle-streams.ts <other checkout>')
const CLIENTS = Number(process.env.CLIENTS ?? 100)
const RESULT_MB = Number(process.env.RESULT_MB ?? 8)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const WATCH_S = Number(process.env.WATCH_S ?? 35)
const dir = mkdtempSync(join(tmpdir(), 'algoserve-idle-streams-'))

/** A client that reads the answer's head and first event, then nothing; `cut` once its server goes. */
function idleClient(base: string, id: string): Promise<{ socket: Socket; cut: () => boolean }> {
  const { hostname, port } = new URL(base)
  return new Promise((resolvePromise, reject) => {
    let gone = false
    const socket = connect(Number(port), hostname, () =>
      socket.write(`GET /jobs/${id}/events HTTP/1.1\r\nhost: ${hostname}\r\n\r\n`),
    )
    let head = ''
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1')
      if (!head.includes('event: state')) return
      socket.off('data', onData)
      socket.pause()
      resolvePromise({ socket, cut: () => gone })
    }
    socket.on('data', onData)
    socket.on('error', () => {
      gone = true
    })
    socket.once('close', () => {
      gone = true
      reject(new Error('closed before its first event'))
    })
  })
}

let rounds = 0
async function round(checkout: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/jobs/idle-streams-server.ts'], {
    env: { ...process.env, CHECKOUT: checkout },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const base = await new Promise<string>((done) =>
    child.stdout.once('data', (chunk: Buffer) => done(chunk.toString().trim())),
  )
  const rssMb = () =>
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024
  const goFile = join(dir, `go-${rounds++}`)
  const response = await fetch(`${base}/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      algorithm: 'BigResult',
      params: { bytes: RESULT_MB * 1024 * 1024, go_file: goFile },
    }),
  })
  const { job_id: id } = (await response.json()) as { job_id: string }
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => idleClient(base, id)))
  await sleep(1000)
  const before = rssMb()
  writeFileSync(goFile, '')
  let peak = before
  const until = Date.now() + WATCH_S * 1000
  while (Date.now() < until) {
    peak = Math.max(peak, rssMb())
    await sleep(50)
  }
  // A paused socket hears of a reset once it reads again.
  for (const client of clients) client.socket.resume()
  await sleep(500)
  const cut = clients.filter((client) => client.cut()).length
  for (const client of clients) client.socket.destroy()
  child.kill('SIGTERM')
  await new Promise((done) => child.once('exit', done))
  return { before, peak, cut }
}

const checkouts = { this: resolve('.'), other: resolve(other) }
const results: Record<keyof typeof checkouts, { before: number; peak: number; cut: number }[]> = {
  this: [],
  other: [],
}
console.log(
  `${CLIENTS} idle clients, a ${RESULT_MB} MB result, watched ${WATCH_S} s; ` +
    `load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
)
for (let n = 0; n < ROUNDS; n++)
  for (const name of ['other', 'this'] as const) {
    const result = await round(checkouts[name])
    results[name].push(result)
    console.log(
      `${name} (${checkouts[name]}): RSS ${result.before.toFixed(0)} MB with the clients, peak ` +
        `${result.peak.toFixed(0)} MB after the end, ${result.cut} of ${CLIENTS} gone 0.5 s after reading again`,
    )
  }
rmSync(dir, { recursive: true, force: true })
for (const name of ['other', 'this'] as const) {
  const rows = results[name]
  console.log(
    `${name}: median RSS ${upperMedian(rows.map((row) => row.before)).toFixed(0)} MB before the end, ` +
      `peak ${upperMedian(rows.map((row) => row.peak)).toFixed(0)} MB, ` +
      `growth ${upperMedian(rows.map((row) => row.peak - row.before)).toFixed(0)} MB`,
  )
}
const growth = (name: 'this' | 'other') => upperMedian(results[name].map((row) => row.peak - row.before))
console.log(`growth, this over other: ${(growth('this') / growth('other')).toFixed(3)}`)
