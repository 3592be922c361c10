// The service's memory while many clients send most of a body and then stall, with
// the defaults (request timeout, body budget) against the same service with both lifted, in one run.
// Usage: node bench/http/runs/slow-clients.mjs   (CLIENTS=1000 BODY_KB=900 HOLD_S=20)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { writeResultOnExit } from '../../lib/markdown-results.mjs'
import { startService } from '../../lib/service.mjs'

writeResultOnExit(
  'slow-clients',
  {
    title: 'memory under 1,000 stalled clients',
    script: 'bench/http/runs/slow-clients.mjs',
    npm: 'npm run bench:slow',
    history: 'docs/benchmarks/hostile-traffic.md',
    command: 'node bench/http/runs/slow-clients.mjs',
  },
  ['BODY_KB', 'CLIENTS', 'HOLD_S'],
)

const CLIENTS = Number(process.env.CLIENTS ?? 1000)
const BODY_KB = Number(process.env.BODY_KB ?? 900)
const HOLD_S = Number(process.env.HOLD_S ?? 20)

const rssMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024

async function run(name, flags) {
  const clients = CLIENTS
  const dataDir = mkdtempSync(join(tmpdir(), 'slow-'))
  const { child, port } = await startService({
    from: 'src',
    args: ['--data-dir', dataDir, '--log-level', 'info', ...flags],
    everyMs: 100,
  })
  await sleep(1000)
  const idle = rssMiB(child.pid)
  const chunk = Buffer.alloc(64 * 1024, 'a')
  const sockets = []
  let refused = 0
  let cut = 0
  for (let i = 0; i < clients; i++) {
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => {})
    socket.on('data', (data) => {
      if (/^HTTP\/1\.1 503/.test(String(data))) refused++
      else if (/^HTTP\/1\.1 408/.test(String(data))) cut++
    })
    socket.write(
      `POST /invoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024}\r\n\r\n{"number": 7, "x": "`,
    )
    for (let sent = 0; sent < BODY_KB * 1024; sent += chunk.length) socket.write(chunk)
    sockets.push(socket)
    if (i % 50 === 49) await sleep(20)
  }
  let peak = 0
  const samples = []
  const started = Date.now()
  while (Date.now() - started < HOLD_S * 1000) {
    for (const socket of sockets) if (socket.writable) socket.write('a')
    const rss = rssMiB(child.pid)
    peak = Math.max(peak, rss)
    samples.push(rss)
    await sleep(1000)
  }
  const open = sockets.filter((s) => !s.destroyed && !s.readableEnded).length
  const health = performance.now()
  await fetch(`http://127.0.0.1:${port}/healthz`)
  const healthMs = performance.now() - health
  for (const socket of sockets) socket.destroy()
  child.kill('SIGINT')
  await new Promise((resolve) => child.on('exit', resolve))
  rmSync(dataDir, { recursive: true, force: true })
  console.log(
    `| ${name} | ${clients} | ${idle.toFixed(0)} | ${peak.toFixed(0)} | ${samples.at(-1).toFixed(0)} | ${refused} | ${cut} | ${open} | ${healthMs.toFixed(1)} |`,
  )
}

console.log(
  `## ${CLIENTS} clients each send ${BODY_KB} KiB of a 1 MiB body, then a byte a second, for ${HOLD_S} s`,
)
console.log()
console.log(
  '| service | clients | idle RSS MiB | peak RSS MiB | RSS at the end MiB | 503 (budget) | 408 (timeout) | still open | /healthz ms |',
)
console.log('|---|---|---|---|---|---|---|---|---|')
await run('defaults (30 s request timeout, 64 MiB body budget)', [])
await run('request timeout 10 s', ['--request-timeout-ms', '10000'])
await run('limits lifted (1 h timeout, 64 GiB budget)', [
  '--request-timeout-ms',
  '3600000',
  '--max-buffered-body-bytes',
  '68719476736',
])
