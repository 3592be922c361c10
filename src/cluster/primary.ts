// The primary of `algoserve serve` with ALGOSERVE_HTTP_PROCESSES above 1: it serves nothing itself. It
// forks the HTTP processes (each a whole `serve` on the shared port: Node.js's cluster module hands the
// connections round-robin), replaces one that dies, tells each how many serve (their /readyz), passes a
// SIGTERM or SIGINT on to every one and exits when all have drained, has every one reload its algorithms
// at a SIGHUP, at a change its watch sees (--watch) or after one took POST /admin/reload, and merges
// their metrics for a scrape that any of them takes. With the embedded store it also keeps the store and
// runs the jobs and webhooks, as one `serve` would (owner), and the processes ask it for the jobs
// (jobs/remote/).
import cluster, { type Worker } from 'node:cluster'
import type { Logger } from 'pino'
import { AggregatorRegistry } from 'prom-client'
import { watchAlgorithms } from '../algorithms/watch.js'
import type { Config } from '../config.js'
import type { JobHost } from '../jobs/remote/host.js'
import {
  type MetricsAnswer,
  type MetricsJson,
  type MetricsRequest,
  ofType,
  PROCESS_INDEX_VARIABLE,
  type ReloadOthers,
  type ScrapeAnswer,
  type ScrapeRequest,
  type ToProcess,
} from './messages.js'

/** Waits before starting again a process that died before it listened, one after another; then the last. */
const RESTART_WAITS_MS = [1000, 2000, 5000, 10_000, 30_000]
/** How long a scrape waits for every process's metrics. */
const SCRAPE_TIMEOUT_MS = 5000

interface Member {
  index: number
  worker: Worker
  listening: boolean
}

export interface PrimaryOptions {
  config: Config
  log: Logger
  /** How long a shutdown may take past the drain delay and the grace period (the processes' own bound). */
  marginMs: number
  /** With the embedded store: the primary's own service, which keeps the jobs and runs them. */
  owner?: JobOwner
}

/** The embedded store's keeper in the primary: what the processes ask of it, and its own part of a scrape. */
export interface JobOwner {
  host: JobHost
  /** Its metrics (jobs run, webhooks sent, its threads), merged with the processes'. */
  metrics(): Promise<MetricsJson>
  /** Loads the algorithms again, as the processes do; `trigger` names the cause in the log. */
  reload(trigger: string): void
  /** Finishes its running jobs and webhook attempts within the grace period, then closes the store. */
  shutdown(): Promise<void>
}

/** Runs the primary until every process has exited after a signal, or one failed to start: the exit code. */
export function runPrimary({ config, log, marginMs, owner }: PrimaryOptions): Promise<number> {
  const wanted = config.httpProcesses
  const members = new Map<number, Member>()
  const failedStarts = new Map<number, number>()
  let stopping: 'SIGTERM' | 'SIGINT' | undefined
  let everyoneServed = false
  let exitCode = 0
  let exit: (code: number) => void = () => {}
  const finished = new Promise<number>((resolve) => {
    exit = resolve
  })
  // The store's keeper stops once every process has: their requests in flight still read and write jobs.
  let finishing = false
  const finish = (code: number) => {
    if (finishing) return
    finishing = true
    if (owner === undefined) return exit(code)
    owner.shutdown().then(
      () => exit(code),
      (error: unknown) => {
        log.error({ err: error }, 'the job store did not close cleanly')
        exit(1)
      },
    )
  }

  const send = (member: Member, message: ToProcess) => {
    if (member.worker.isConnected()) member.worker.send(message)
  }
  const serving = () => [...members.values()].filter((member) => member.listening).length
  const tellServing = () => {
    const count = serving()
    for (const member of members.values()) send(member, { type: 'algoserve:serving', serving: count, wanted })
  }

  const fork = (index: number) => {
    const worker = cluster.fork({ [PROCESS_INDEX_VARIABLE]: String(index) })
    const member: Member = { index, worker, listening: false }
    members.set(worker.id, member)
    owner?.host.attach(worker)
    // A message written as the process exits (the others are told how many still serve) fails with EPIPE
    // after `isConnected()` said yes. Its exit is handled on its own: the error must not end the primary.
    worker.on('error', (error) => {
      const level = stopping === undefined ? 'warn' : 'debug'
      log[level]({ err: error, process: index }, 'a message to an HTTP process could not be written')
    })
    worker.on('message', (message: unknown) => {
      const scrape = ofType<ScrapeRequest>(message, 'algoserve:scrape')
      if (scrape !== undefined) void answerScrape(member, scrape.id)
      const answer = ofType<MetricsAnswer>(message, 'algoserve:metrics-answer')
      if (answer !== undefined) collected(worker.id, answer)
      const reloaded = ofType<ReloadOthers>(message, 'algoserve:reload-others')
      if (reloaded !== undefined) reloadAll(reloaded.trigger, member)
    })
    worker.once('listening', () => {
      member.listening = true
      failedStarts.delete(index)
      if (serving() === wanted && !everyoneServed) {
        everyoneServed = true
        log.info({ processes: wanted }, 'every HTTP process listens')
      }
      tellServing()
    })
    worker.once('exit', (code, signal) => {
      members.delete(worker.id)
      dropFromScrapes(worker.id)
      tellServing()
      if (stopping !== undefined) {
        if (code !== 0) exitCode = 1
        if (members.size === 0) finish(exitCode)
        return
      }
      log.error({ process: index, child_pid: worker.process.pid, code, signal }, 'an HTTP process exited')
      if (!member.listening && !everyoneServed) {
        // At the first start, a process that cannot start is a setting or a missing part: every other
        // would fail alike. The service stops with its code, as one process would.
        log.fatal({ process: index }, 'an HTTP process failed to start: stopping the others')
        exitCode = code ?? 1
        stop('SIGINT')
        return
      }
      const attempt = member.listening ? 0 : (failedStarts.get(index) ?? 0) + 1
      failedStarts.set(index, attempt)
      const waitMs =
        attempt === 0 ? 0 : (RESTART_WAITS_MS[Math.min(attempt, RESTART_WAITS_MS.length) - 1] ?? 0)
      setTimeout(() => {
        if (stopping === undefined) fork(index)
      }, waitMs)
    })
  }

  // A scrape asks every process that listens for its registry, and merges what they send (prom-client's
  // aggregation, by each metric's `aggregator`: docs/metrics.md#several-http-processes).
  let scrapes = 0
  const pending = new Map<
    number,
    { waiting: Set<number>; got: MetricsJson[]; done: (error?: Error) => void }
  >()
  const collected = (workerId: number, answer: MetricsAnswer) => {
    const scrape = pending.get(answer.id)
    if (scrape === undefined) return
    if (answer.error !== undefined) return scrape.done(new Error(answer.error))
    if (answer.metrics !== undefined) scrape.got.push(answer.metrics)
    scrape.waiting.delete(workerId)
    if (scrape.waiting.size === 0) scrape.done()
  }
  // A process that exits meanwhile counts no more: the others' metrics are the service's.
  const dropFromScrapes = (workerId: number) => {
    for (const scrape of pending.values()) {
      scrape.waiting.delete(workerId)
      if (scrape.waiting.size === 0) scrape.done()
    }
  }
  const answerScrape = async (asker: Member, id: number) => {
    const reply: ScrapeAnswer = { type: 'algoserve:scrape-answer', id }
    try {
      reply.text = await mergedMetrics()
    } catch (error) {
      reply.error = (error as Error).message
    }
    send(asker, reply)
  }
  const mergedMetrics = () =>
    new Promise<string>((resolve, reject) => {
      const id = scrapes++
      const asked = [...members.values()].filter((member) => member.listening)
      const got: MetricsJson[] = []
      const timer = setTimeout(
        () => scrape.done(new Error('an HTTP process did not send its metrics in time')),
        SCRAPE_TIMEOUT_MS,
      )
      const scrape = {
        waiting: new Set(asked.map((member) => member.worker.id)),
        got,
        done: (error?: Error) => {
          if (!pending.delete(id)) return
          clearTimeout(timer)
          if (error !== undefined) return reject(error)
          Promise.resolve(owner?.metrics())
            .then((own) => AggregatorRegistry.aggregate(own === undefined ? got : [...got, own]).metrics())
            .then(resolve, reject)
        },
      }
      pending.set(id, scrape)
      const request: MetricsRequest = { type: 'algoserve:metrics', id }
      for (const member of asked) send(member, request)
      if (asked.length === 0) scrape.done()
    })

  const stop = (signal: 'SIGTERM' | 'SIGINT') => {
    if (stopping !== undefined) return
    stopping = signal
    const drainDelayMs = signal === 'SIGINT' ? 0 : config.drainDelayMs
    log.info({ signal, processes: members.size }, 'shutting down: every HTTP process drains')
    for (const member of members.values()) send(member, { type: 'algoserve:shutdown', signal })
    if (members.size === 0) finish(exitCode)
    // The processes bound their own shutdown; this bounds the primary's, whatever one of them does.
    setTimeout(
      () => {
        log.error('an HTTP process did not shut down in time: killing it')
        for (const member of members.values()) member.worker.process.kill('SIGKILL')
        exit(1)
      },
      // The store's keeper has its own grace period after the processes'.
      drainDelayMs + (owner === undefined ? 1 : 2) * config.shutdownGraceMs + 3 * marginMs,
    ).unref()
  }
  // Every process loads the algorithms again on its own, and logs what it did: the store's keeper too, whose
  // runner takes only the jobs of the versions it has loaded.
  const reloadAll = (trigger: string, done?: Member) => {
    owner?.reload(trigger)
    for (const member of members.values())
      if (member !== done) send(member, { type: 'algoserve:reload', trigger })
  }
  process.on('SIGHUP', () => reloadAll('SIGHUP'))
  // One watch for the service: the processes do not watch on their own.
  if (config.watch) watchAlgorithms(config.algorithms, () => reloadAll('watch'))
  process.once('SIGTERM', () => stop('SIGTERM'))
  process.once('SIGINT', () => stop('SIGINT'))

  // Structured clones: a gauge's NaN (a store that cannot be read) stays NaN, where JSON makes it null.
  cluster.setupPrimary({ serialization: 'advanced' })
  log.info({ processes: wanted }, 'starting the HTTP processes')
  for (let index = 0; index < wanted; index++) fork(index)
  return finished
}
