// The account of a small /invoke's CPU time from a V8 CPU profile of the service under the small-prime load:
// each sample of the main thread goes to the part of the request path whose function is nearest the leaf of
// its stack (request id, access line, metrics, hooks, parsing, validation, the run, serialisation, the
// answer's write), or to Fastify and node:http otherwise; printed as shares of the busy (not idle) time.
// Profile: node --max-semi-space-size=1 --cpu-prof --cpu-prof-dir=DIR --cpu-prof-interval 100 dist/main.js
// serve --drain-delay-ms 0, wrk's small-prime load for 3 s (warm-up) then 10 s, SIGTERM.
// Usage: node bench/http/profile-parts.mjs DIR/CPU.*.0.001.cpuprofile SKIP_S KEEP_S
//   (the samples from SKIP_S seconds after the profile's start, for KEEP_S seconds: the measured load only)
import { readFileSync } from 'node:fs'

const [file, skipS, keepS] = [process.argv[2], Number(process.argv[3] ?? 0), Number(process.argv[4] ?? 1e9)]
const p = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(p.nodes.map((n) => [n.id, n]))
const parent = new Map()
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const name = (n) =>
  `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/.*node_modules\//, 'nm/').replace(/.*\/dist\//, 'dist/')}:${n.callFrame.lineNumber}`
let t = p.startTime
const from = p.startTime + skipS * 1e6,
  to = from + keepS * 1e6
const cnt = new Map()
let total = 0
p.samples.forEach((id, i) => {
  t += p.timeDeltas[i]
  if (t < from || t > to) return
  const dt = p.timeDeltas[i + 1] ?? p.timeDeltas[i]
  cnt.set(id, (cnt.get(id) ?? 0) + dt)
  total += dt
})
// categories: first matching rule on the stack from the leaf up wins (most specific first)
const rules = [
  [
    'request id',
    (s) => /requestId dist\/http\/http-observer|freshRequestId|getGenReqId|randomUUID|randomFillSync/.test(s),
  ],
  [
    'access line: pino and batching',
    (s) => /requestCompleted dist\/http\/request-log|BatchedLines|#handOver|log-destination/.test(s),
  ],
  [
    'access line: the file write (sonic-boom, fs.write)',
    (s) => /nm\/sonic-boom|^write node:fs|wrapper node:fs/.test(s),
  ],
  [
    'HTTP metrics, in-progress gauge, x-request-id header',
    (s) =>
      /observeRequest|countAnswer|countUnmatchedAnswer|requestEnded|endpointObserver|dist\/http\/http-observer/.test(
        s,
      ),
  ],
  ['Content-Type hook', (s) => /readContentType|\(anon\) dist\/http\/json-body.js:19/.test(s)],
  ['body budget hook', (s) => /reserveBodyBytes|body-budget/.test(s)],
  ['Fastify request logger (lazy child)', (s) => /request-log.js|LazyChild|lazyRequestLogger/.test(s)],
  ['body parse (lossless JSON)', (s) => /readJson dist|parseBody dist|bounded-json/.test(s)],
  ['body validation (schema)', (s) => /dist\/http\/validation/.test(s)],
  [
    'params check (parseParams)',
    (s) => /parseParams|integer-input|dist\/algorithms\/params|schema-check/.test(s),
  ],
  [
    'inline run (executor, PrimeChecker, algorithm metrics)',
    (s) => /dist\/execution|prime-checker|timed-run/.test(s),
  ],
  [
    'answer serialisation',
    (s) => /serialize nm\/fastify\/lib\/reply|lazy-serializers|anonymous\d+ :/.test(s),
  ],
  ["the answer's socket write (writev)", (s) => /^writev |writevGeneric|Socket._writev/.test(s)],
  ['route handler (the rest)', (s) => /dist\/routes\/invoke/.test(s)],
]
const cat = new Map()
let gc = 0,
  idle = 0,
  program = 0
for (const [id, dt] of cnt) {
  const leaf = byId.get(id)
  const fn = leaf.callFrame.functionName
  if (fn === '(idle)') {
    idle += dt
    continue
  }
  if (fn === '(garbage collector)') {
    gc += dt
    continue
  }
  if (fn === '(program)') {
    program += dt
    continue
  }
  let cur = id,
    found = 'Fastify and node:http (the rest)'
  const stack = []
  while (cur !== undefined) {
    stack.push(name(byId.get(cur)))
    cur = parent.get(cur)
  }
  outer: for (const s of stack)
    for (const [c, r] of rules)
      if (r(s)) {
        found = c
        break outer
      }
  cat.set(found, (cat.get(found) ?? 0) + dt)
}
const busy = total - idle
console.log(
  `window ${(total / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s`,
)
cat.set('garbage collection', gc)
cat.set('(program): V8/native outside JS', program)
for (const [c, dt] of [...cat].sort((a, b) => b[1] - a[1]))
  console.log(`${((100 * dt) / busy).toFixed(1).padStart(5)}%  ${c}`)
