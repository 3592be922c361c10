// One HTTP process under the primary (primary.ts): it learns its index, how many processes serve (its
// /readyz), when to reload its algorithms and when to shut down, answers the primary's requests for its
// metrics, and asks the primary for the whole service's when it takes a scrape.
import cluster from 'node:cluster'
import type { Registry } from 'prom-client'
import {
  type MetricsAnswer,
  type MetricsRequest,
  ofType,
  PROCESS_INDEX_VARIABLE,
  type ReloadRequest,
  type ScrapeAnswer,
  type Serving,
  type ShutdownRequest,
  type ToPrimary,
} from './messages.js'

/** How long a scrape waits for the primary: longer than the primary waits for the processes. */
const SCRAPE_TIMEOUT_MS = 10_000

export interface ClusterMember {
  /** This process's index, 0 to ALGOSERVE_HTTP_PROCESSES - 1, as its log lines name it. */
  readonly index: number
  /** Whether every process the setting asks for listens: /readyz's `http_processes` check. */
  allServing(): boolean
  /** The whole service's metrics, merged by the primary. */
  scrape(): Promise<string>
  /** From now on the primary's requests for this process's metrics read `registry`. */
  serveMetrics(registry: Registry): void
  /** Calls `shutdown` when the primary passes a signal on. */
  onShutdown(shutdown: (signal: ShutdownRequest['signal']) => void): void
  /** Calls `reload` when the primary asks for a reload, and at once for one asked before this call. */
  onReload(reload: (trigger: string) => void): void
  /** Has the primary reload every other process (and its own store's runner), after this one reloaded. */
  reloadOthers(trigger: string): void
}

/**
 * This process as a member of the cluster, or null when it was not forked by a primary. Reads (and
 * removes, so that no program of a process algorithm inherits it) the index the primary gave it.
 */
export function joinCluster(): ClusterMember | null {
  if (!cluster.isWorker) return null
  const index = Number(process.env[PROCESS_INDEX_VARIABLE])
  delete process.env[PROCESS_INDEX_VARIABLE]
  let serving: Omit<Serving, 'type'> = { serving: 0, wanted: 1 }
  let registry: Registry | undefined
  let shutdown: ((signal: ShutdownRequest['signal']) => void) | undefined
  let reload: ((trigger: string) => void) | undefined
  // A reload asked for while the service was still loading its algorithms, which may predate the change.
  let reloadAsked: string | undefined
  let scrapes = 0
  const waiting = new Map<number, (answer: ScrapeAnswer) => void>()
  const send = (message: ToPrimary) => {
    if (process.connected) process.send?.(message)
  }
  process.on('message', (message: unknown) => {
    const count = ofType<Serving>(message, 'algoserve:serving')
    if (count !== undefined) serving = count
    const stop = ofType<ShutdownRequest>(message, 'algoserve:shutdown')
    if (stop !== undefined) shutdown?.(stop.signal)
    const reloading = ofType<ReloadRequest>(message, 'algoserve:reload')
    if (reloading !== undefined) {
      if (reload === undefined) reloadAsked = reloading.trigger
      else reload(reloading.trigger)
    }
    const answer = ofType<ScrapeAnswer>(message, 'algoserve:scrape-answer')
    if (answer !== undefined) waiting.get(answer.id)?.(answer)
    const request = ofType<MetricsRequest>(message, 'algoserve:metrics')
    if (request !== undefined) void answerMetrics(request.id)
  })
  const answerMetrics = async (id: number) => {
    const answer: MetricsAnswer = { type: 'algoserve:metrics-answer', id }
    try {
      answer.metrics = registry === undefined ? [] : await registry.getMetricsAsJSON()
    } catch (error) {
      answer.error = (error as Error).message
    }
    send(answer)
  }
  return {
    index,
    allServing: () => serving.serving >= serving.wanted,
    scrape: () =>
      new Promise<string>((resolve, reject) => {
        const id = scrapes++
        const timer = setTimeout(() => {
          waiting.delete(id)
          reject(new Error('the primary did not send the metrics in time'))
        }, SCRAPE_TIMEOUT_MS)
        waiting.set(id, (answer) => {
          waiting.delete(id)
          clearTimeout(timer)
          if (answer.text !== undefined) resolve(answer.text)
          else reject(new Error(answer.error ?? 'no metrics'))
        })
        send({ type: 'algoserve:scrape', id })
      }),
    serveMetrics(next) {
      registry = next
    },
    onShutdown(next) {
      shutdown = next
    },
    onReload(next) {
      reload = next
      if (reloadAsked !== undefined) next(reloadAsked)
      reloadAsked = undefined
    },
    reloadOthers(trigger) {
      send({ type: 'algoserve:reload-others', trigger })
    },
  }
}
