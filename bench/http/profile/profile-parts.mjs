// The account of a small /invoke's CPU time from a V8 CPU profile of the service under the small-prime load:
// each sample of the main thread goes to the part of the request path whose function is nearest the leaf of
// its stack (request id, access line, metrics, hooks, parsing, validation, the run, serialisation, the
// answer's write), or to Fastify and node:http otherwise; printed as shares of the busy (not idle) time.
// Profile: node --max-semi-space-size=1 --cpu-prof --cpu-prof-dir=DIR --cpu-prof-interval 100 dist/main.js
// serve --drain-delay-ms 0, wrk's small-prime load for 3 s (warm-up) then 10 s, SIGTERM.
// Usage: node bench/http/profile/profile-parts.mjs DIR/CPU.*.0.001.cpuprofile SKIP_S KEEP_S
//   (the samples from SKIP_S seconds after the profile's start, for KEEP_S seconds: the measured load only)
import { writeResultOnExit } from '../../lib/markdown-results.mjs'
import { accountOf, printAccount } from './profile-account.mjs'

writeResultOnExit(
  'profile-parts',
  {
    title: "where a small /invoke's CPU goes: the account",
    script: 'bench/http/profile/profile-parts.mjs',
    history: 'docs/benchmarks/invoke.md',
    command: 'node bench/http/profile/profile-parts.mjs',
  },
  [],
)

const [file, skipS, keepS] = [process.argv[2], Number(process.argv[3] ?? 0), Number(process.argv[4] ?? 1e9)]
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
printAccount(accountOf(file, skipS, keepS, rules, 'Fastify and node:http (the rest)'))
