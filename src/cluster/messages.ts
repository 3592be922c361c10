// What the primary and its HTTP processes say to each other over the cluster's IPC channel. Every message
// has a `type` starting `algoserve:`; Node.js's own cluster messages and any other are left alone.
import type { MetricObjectWithValues, MetricValue } from 'prom-client'

/** The variable that gives each HTTP process its index, 0 to ALGOSERVE_HTTP_PROCESSES - 1. */
export const PROCESS_INDEX_VARIABLE = 'ALGOSERVE_HTTP_PROCESS'

export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[]

/** Primary to each process: how many processes listen now, and how many should. */
export interface Serving {
  type: 'algoserve:serving'
  serving: number
  wanted: number
}

/** Primary to each process: shut down as at this signal. */
export interface ShutdownRequest {
  type: 'algoserve:shutdown'
  signal: 'SIGTERM' | 'SIGINT'
}

/**
 * Primary to a process: load the algorithms again, as at a SIGHUP (one to the primary, its watch of the
 * files, or another process's POST /admin/reload); `trigger` names the cause in the log.
 */
export interface ReloadRequest {
  type: 'algoserve:reload'
  trigger: string
}

/** A process to the primary: POST /admin/reload reloaded this process's algorithms; reload every other. */
export interface ReloadOthers {
  type: 'algoserve:reload-others'
  trigger: string
}

/** A process to the primary: the whole service's metrics, please. */
export interface ScrapeRequest {
  type: 'algoserve:scrape'
  id: number
}

/** The primary to the process that asked: the exposition text, or why there is none. */
export interface ScrapeAnswer {
  type: 'algoserve:scrape-answer'
  id: number
  text?: string
  error?: string
}

/** The primary to each process: this process's own metrics, please. */
export interface MetricsRequest {
  type: 'algoserve:metrics'
  id: number
}

/** A process to the primary: its registry as JSON. */
export interface MetricsAnswer {
  type: 'algoserve:metrics-answer'
  id: number
  metrics?: MetricsJson
  error?: string
}

export type ToProcess = Serving | ShutdownRequest | ReloadRequest | ScrapeAnswer | MetricsRequest
export type ToPrimary = ScrapeRequest | MetricsAnswer | ReloadOthers

/** A message of ours of type `type`, else undefined. */
export function ofType<M extends { type: string }>(message: unknown, type: M['type']): M | undefined {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type
    ? (message as M)
    : undefined
}
