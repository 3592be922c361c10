#!/usr/bin/env -S node --max-semi-space-size=1
// The command line: `algoserve serve|worker [--flag value ...]`. Reads the config once, wires the parts
// together, listens, shuts down gracefully on SIGTERM/SIGINT, and reloads the algorithms on SIGHUP.
// `serve` is the HTTP API; `worker` runs jobs and webhooks from Redis (distributed mode) and serves only
// /healthz, /readyz and /metrics.
// `algorithms`, `call` and `jobs ...` are a client of a running service (src/client/); `check` and `run`
// try algorithms in this process before they are served (src/local/).
//
// Run with a 1 MB young generation (the flag above, and in `npm start`): V8's default of 16 MB per
// semi-space held about 10 MB more at idle, which put the service over its 100 MB, and about 35 MB
// more under load, for about 11% more /invoke throughput (docs/benchmarks/invoke.md). Only the command line
// sets it.
// `npm run worker` keeps V8's default: see smallYoungGeneration below.
import { hostname } from 'node:os'
import pino from 'pino'
import { CLIENT_USAGE, USAGE_HINT } from './client/args.js'
import { runClient } from './client/cli.js'
import { joinCluster } from './cluster/member.js'
import type { JobOwner } from './cluster/primary.js'
import { type Config, loadConfig, settingsHelp, unknownSettings } from './config.js'
import { ConfigError } from './errors.js'
import { LOCAL_USAGE } from './local/usage.js'
import { consoleIntoLog } from './logging/library-console.js'
import { type LogDestination, stdoutDestination } from './logging/log-destination.js'
import type { Role } from './service.js'
import { SHUTDOWN_MARGIN_MS } from './shutdown-margin.js'
import type { StartedTracing } from './tracing/sdk.js'
import { tracingWanted } from './tracing/wanted.js'

const USAGE = `Usage: algoserve serve|worker [--flag value ...]
       algoserve algorithms|call|jobs ... (a client: see below)
       algoserve check|run ... (before serving: see below)

  serve    the HTTP API (with the embedded store it runs jobs and webhooks too)
  worker   runs jobs and webhooks from Redis (needs ALGOSERVE_REDIS_URL); /healthz, /readyz and
           /metrics on ALGOSERVE_WORKER_PORT

Settings of serve and worker (flag, environment variable, meaning):
${settingsHelp()}

${LOCAL_USAGE}
${CLIENT_USAGE}`

/**
 * True when node was given a young generation smaller than V8's default of 16 MB (as this file's first line
 * does, for `serve`'s memory). A worker holds each job and webhook across round trips to Redis: such a young
 * generation promotes them, and the worker spends its time in major collections (docs/operating.md#memory).
 */
function smallYoungGeneration(): boolean {
  const given = '--max-semi-space-size='
  return process.execArgv.some((flag) => flag.startsWith(given) && Number(flag.slice(given.length)) < 16)
}

/**
 * The primary's own service when the HTTP processes share the embedded store: it opens the store (one
 * process may), runs the jobs and webhooks as one `serve` would, and answers the processes' calls on it.
 * It never listens: its app is only the service's wiring.
 */
async function keepJobs(config: Config, stream: LogDestination): Promise<JobOwner> {
  // Its runs and webhook attempts belong to their jobs' traces, as in one `serve`.
  const tracer = await startTracingIfWanted()
  const { createService } = await import('./service.js')
  const { JobHost } = await import('./jobs/remote/host.js')
  const base = { pid: process.pid, hostname: hostname(), process: 'primary' }
  const service = await createService(config, {
    role: 'serve',
    logger: {
      level: config.logLevel,
      base,
      stream,
      ...(tracer === null ? {} : { mixin: tracer.logFields }),
    },
  })
  const host = await JobHost.over(service.backend)
  service.start()
  service.app.log.info(
    {
      role: 'jobs',
      threads: service.executor.threads,
      job_concurrency: service.jobConcurrency,
      data_dir: config.dataDir,
    },
    'ready',
  )
  return {
    host,
    metrics: () => service.metrics.registry.getMetricsAsJSON(),
    // A refused reload is logged with its reason, and the running set stays.
    reload: (trigger) => void service.reload(trigger).catch(() => {}),
    shutdown: async () => {
      await service.shutdown(config.shutdownGraceMs)
      await tracer
        ?.shutdown()
        .catch((error: unknown) => service.app.log.warn({ err: error }, 'could not export traces'))
    },
  }
}

/**
 * Only when the OTEL_* variables ask for traces, and before the service's modules load, so that the
 * instrumentations patch them: otherwise no OpenTelemetry module is loaded at all (docs/tracing.md).
 */
async function startTracingIfWanted(): Promise<StartedTracing | null> {
  return tracingWanted(process.env) ? (await import('./tracing/sdk.js')).startTracing() : null
}

async function run(role: Role, args: string[]): Promise<void> {
  const config = loadConfig(args, process.env)
  // Asynchronous, batched writes: one synchronous write per access line cost /invoke a large share of
  // its throughput (docs/benchmarks/invoke.md). What is buffered is written out at any exit or crash.
  const logStream = stdoutDestination()
  // Several HTTP processes: this one is their primary, which serves nothing, or one of them.
  const member = role === 'serve' && config.httpProcesses > 1 ? joinCluster() : null
  if (role === 'serve' && config.httpProcesses > 1 && member === null) {
    const { runPrimary } = await import('./cluster/primary.js')
    const log = pino({ level: config.logLevel, base: { pid: process.pid, component: 'cluster' } }, logStream)
    for (const warning of unknownSettings(process.env)) log.warn(warning)
    watchNpmParent(() => process.kill(process.pid, 'SIGTERM'))
    const owner = config.redisUrl === null ? await keepJobs(config, logStream) : undefined
    process.exit(await runPrimary({ config, log, marginMs: SHUTDOWN_MARGIN_MS, owner }))
  }
  // Each line names the HTTP process it comes from, beside its pid, when there are several.
  const base = {
    pid: process.pid,
    hostname: hostname(),
    ...(member === null ? {} : { process: member.index }),
  }
  consoleIntoLog(pino({ level: config.logLevel, base: { ...base, component: 'library' } }, logStream))
  const tracer = await startTracingIfWanted()
  // Loaded here, not at the top: the client commands need none of the service's modules.
  const { createService } = await import('./service.js')
  // Beside others, with the embedded store: the primary keeps the jobs (keepJobs), and this process asks it.
  const remoteJobs =
    member !== null && config.redisUrl === null
      ? new (await import('./jobs/remote/backend.js')).RemoteBackend()
      : undefined
  const service = await createService(config, {
    role,
    ...(member === null ? {} : { checks: { http_processes: member.allServing } }),
    ...(remoteJobs === undefined ? {} : { backend: remoteJobs }),
    ...(member === null ? {} : { reloadedByRequest: member.reloadOthers }),
    logger: {
      level: config.logLevel,
      base,
      stream: logStream,
      // Each line written inside a traced request or run carries its trace_id and span_id.
      ...(tracer === null ? {} : { mixin: tracer.logFields }),
    },
  })
  const { app } = service
  if (member !== null) {
    member.serveMetrics(service.metrics.registry)
    service.metrics.mergeWith(member.scrape)
  } else {
    // A mistyped name (ALGOSERVE_PROT) would otherwise be ignored without a word (the primary said it once).
    for (const warning of unknownSettings(process.env)) app.log.warn(warning)
  }
  if (role === 'worker' && smallYoungGeneration()) {
    app.log.warn(
      "this worker runs with a young generation smaller than V8's default (--max-semi-space-size): at a high job rate its jobs and webhooks wait on garbage collection; start it with `node dist/main.js worker` (docs/operating.md#memory)",
    )
  }

  const shutdown = async (signal: string) => {
    if (service.shuttingDown) return
    // An orchestrator sends SIGTERM and then stops routing to the instance: the listener stays open
    // for the drain delay. SIGINT comes from a terminal, where nobody routes: stop at once.
    const drainDelayMs = signal === 'SIGINT' ? 0 : config.drainDelayMs
    app.log.info(
      { signal, drainDelayMs, graceMs: config.shutdownGraceMs },
      'shutting down: readiness is now 503; draining, then finishing requests, running jobs and webhook attempts',
    )
    // The backends bound their own waits; this is the promise made to supervisors, whatever hangs.
    setTimeout(
      () => {
        app.log.error('shutdown did not complete in time: exiting')
        process.exit(1)
      },
      drainDelayMs + config.shutdownGraceMs + SHUTDOWN_MARGIN_MS,
    ).unref()
    await service.shutdown(config.shutdownGraceMs, drainDelayMs)
    // The spans still buffered go out before the exit.
    await tracer
      ?.shutdown()
      .catch((error: unknown) => app.log.warn({ err: error }, 'could not export traces'))
    app.log.info('shutdown complete')
    process.exit(0)
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  process.once('SIGINT', () => void shutdown('SIGINT'))
  // A refused reload is logged with its reason, and the running set stays.
  const reload = (trigger: string) => void service.reload(trigger).catch(() => {})
  process.on('SIGHUP', () => reload('SIGHUP'))
  // Beside others, the primary watches the files for all of them (cluster/primary.ts).
  if (config.watch && member === null) {
    const { watchAlgorithms } = await import('./algorithms/watch.js')
    watchAlgorithms(config.algorithms, () => reload('watch'))
  }
  member?.onShutdown((signal) => void shutdown(signal))
  member?.onReload(reload)
  watchNpmParent(() => void shutdown('SIGTERM'))

  try {
    await app.listen({ host: config.host, port: role === 'worker' ? config.workerPort : config.port })
  } catch (error) {
    app.log.fatal({ err: error }, 'could not listen')
    throw error
  }
  service.start()
  app.log.info(
    {
      uptime_ms: Math.round(process.uptime() * 1000),
      role,
      threads: service.executor.threads,
      // Where the thread count came from: the setting, or the CPUs this process may use.
      threads_from: service.executor.usableCpus?.source ?? 'ALGOSERVE_WORKER_THREADS',
      ...(service.executor.usableCpus === null ? {} : { cpus: service.executor.usableCpus.cpus }),
      runs_jobs: service.runsJobs,
      ...(service.runsJobs ? { job_concurrency: service.jobConcurrency } : {}),
      ...(config.redisUrl === null
        ? { data_dir: config.dataDir }
        : { redis_prefix: config.redisPrefix, job_lock_ms: config.jobLockMs }),
    },
    'ready',
  )
}

/**
 * Under `npm start`, npm is the parent and dies of a SIGTERM without passing it on, which left the
 * server running, orphaned. Its parent's exit is taken as that SIGTERM. Started any other way (a
 * container, a service manager, `nohup`), the server does not care who its parent is.
 */
function watchNpmParent(onOrphaned: () => void): void {
  if (process.env.npm_lifecycle_event === undefined) return
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid === parent) return
    clearInterval(timer)
    onOrphaned()
  }, 250)
  timer.unref()
}

const isClient = (command: string | undefined) =>
  command === 'call' || command === 'jobs' || command === 'algorithms'
const isLocal = (command: string | undefined) => command === 'check' || command === 'run'

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv
  const output = {
    out: (text: string) => process.stdout.write(text),
    err: (text: string) => process.stderr.write(text),
    errIsTTY: process.stderr.isTTY === true,
    errColumns: process.stderr.columns,
  }
  if (isClient(command)) {
    process.exitCode = await runClient(argv, process.env, output)
    return
  }
  if (isLocal(command)) {
    // Loaded here: the service's loader and executor, which the other commands load on their own.
    const { runLocalCommand } = await import('./local/cli.js')
    process.exitCode = await runLocalCommand(argv, process.env, output)
    return
  }
  if (command === undefined || command === '--help' || command === '-h' || args.includes('--help')) {
    process.stdout.write(USAGE)
    return
  }
  if (command !== 'serve' && command !== 'worker') {
    process.stderr.write(`algoserve: unknown command '${command}'\n${USAGE_HINT}\n`)
    process.exit(2)
  }
  await run(command, args)
}

// Every message on stderr starts with `algoserve:`; no stack trace (the service's own log has them).
main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`algoserve: ${error.message}\n`)
    process.exit(2)
  }
  const message = error instanceof Error ? error.message : String(error)
  const what = isClient(process.argv[2]) || isLocal(process.argv[2]) ? '' : 'failed to start: '
  process.stderr.write(`algoserve: ${what}${message}\n`)
  process.exit(1)
})
