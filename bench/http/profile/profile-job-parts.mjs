// The account of a small job's CPU time from a V8 CPU profile of the service under bench/http/wrk/jobs.sh's
// small-prime load (bench/http/profile/profile-jobs.sh takes the profiles and calls this): each sample of the
// main thread goes to the part of the job path whose entry is nearest the leaf of its stack. The POST's
// request (request id, access line, hooks, parsing, validation, the params check, the handler, the answer),
// the store's insert with its triggers, the claim, the run, the end's writes, what a job's end tells
// (counters, waiters, events), metrics, logging; in distributed mode, BullMQ and ioredis, and our Redis code;
// Fastify and node:http otherwise. Printed as shares of the busy (not idle) time.
// Usage: node bench/http/profile/profile-job-parts.mjs CPU.*.cpuprofile SKIP_S KEEP_S
//   (the samples from SKIP_S seconds after the profile's start, for KEEP_S seconds: the measured load only)
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { accountOf, printAccount } from './profile-account.mjs'

const [file, skipS, keepS] = [process.argv[2], Number(process.argv[3] ?? 0), Number(process.argv[4] ?? 1e9)]
const is = (pattern) => (frame) => pattern.test(frame)
// Entries rather than leaves where code is shared: PrimeChecker's params check runs in the POST (under
// readParams) and in the run (under the job's execute), so each is named by its caller.
const rules = [
  ['POST: request id', is(/requestId dist\/http\/http-observer|freshRequestId|getGenReqId|randomUUID/)],
  [
    'logging: access line, pino, the batch and its write',
    is(
      /requestCompleted dist\/http\/request-log|BatchedLines|#handOver|log-destination|nm\/sonic-boom|nm\/pino\//,
    ),
  ],
  ['metrics: prom-client (HTTP series, jobs created and ended, job duration)', is(/nm\/prom-client/)],
  ['POST: HTTP observer (in-progress, x-request-id, drain check)', is(/dist\/http\/http-observer/)],
  ['POST: Content-Type and body budget hooks', is(/readContentType|reserveBodyBytes|body-budget/)],
  ['POST: lazy request logger', is(/request-log.js|LazyChild|lazyRequestLogger/)],
  ['POST: body validation (schema)', is(/dist\/http\/validation/)],
  ['POST: params check (readParams)', is(/^readParams dist\/algorithms\/params/)],
  // The store, embedded: the group commit's BEGIN and COMMIT (the WAL's writes) apart from each statement.
  ['store: BEGIN and COMMIT (the WAL written)', is(/^exec .*(better-sqlite3|sqlite-driver)|^(BEGIN|COMMIT)/)],
  ['store: submit (insert, its triggers, commit)', is(/^(submit|#insert) .*sqlite-store/)],
  ['store: claim (select, start, commit)', is(/^(claim|#claim) .*sqlite-store/)],
  ["store: the end's writes (finish, triggers, commit)", is(/^(finish|#finish) .*sqlite-store/)],
  ['store: reads', is(/^read .*sqlite-store/)],
  [
    "run: the job's params, executor, PrimeChecker",
    is(/dist\/jobs\/execute|^run dist\/(execution\/)?executor|timedRunInline/),
  ],
  [
    "job's end told: waiters, events, progress, webhook wake",
    is(/#jobEnded|^onChanged dist|^onEnded dist|throttledProgress|dist\/jobs\/(progress|waiters|watchers)/),
  ],
  [
    'BullMQ and ioredis (commands, scripts, replies)',
    is(/nm\/bullmq|nm\/ioredis|nm\/redis-parser|nm\/msgpackr/),
  ],
  ['our Redis code (submit, consumers, queues, events)', is(/dist\/jobs\/redis\//)],
  [
    'runner: work loop, claim batches, abort signals, run bookkeeping',
    is(/dist\/jobs\/embedded\/(runner|work-loop|backend)|dist\/jobs\/runner|dist\/work-loop/),
  ],
  ['POST: body parse (lossless JSON)', is(/readJson dist|parseBody dist|bounded-json/)],
  [
    'POST: answer serialisation',
    is(/serialize nm\/fastify\/lib\/reply|lazy-serializers|anonymous\d+ :|isoTime|jobStatusJson/),
  ],
  ['POST: route handler, the rest (job id, params text, the answer object)', is(/dist\/routes\/jobs/)],
  [
    'socket writes (writev: answers, and Redis commands in distributed mode)',
    is(/^writev |writevGeneric|Socket._writev/),
  ],
]
// The embedded store's writes run as callbacks of its group commit: each is named after the method that made
// it (the nearest method defined above it in the built file), so that its statements count to that method.
const methods = new Map()
const methodOf = ({ url, lineNumber }) => {
  if (!url.endsWith('/sqlite-store.js')) return undefined
  if (!methods.has(url)) {
    const lines = readFileSync(fileURLToPath(url), 'utf8').split('\n')
    methods.set(
      url,
      lines.map((line) => /^ {4}(?:async )?(#?\w+)\(/.exec(line)?.[1]),
    )
  }
  const names = methods.get(url)
  for (let line = lineNumber; line >= 0; line--) if (names[line] !== undefined) return names[line]
  return undefined
}
printAccount(accountOf(file, skipS, keepS, rules, 'Fastify, node:http and Node (the rest)', methodOf))
