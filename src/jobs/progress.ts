// A running job's progress as every backend stores it. Whatever rate the algorithm reports at, a job's
// store sees at most one write every PROGRESS_WRITE_INTERVAL_MS: the first report at once, then the latest
// one each interval, so that a run reporting thousands of times a second costs a few writes a second.
import type { JobProgress } from './job.js'

export const PROGRESS_WRITE_INTERVAL_MS = 250

/** The longest progress message kept, in characters: it is written with every update. */
export const MAX_PROGRESS_MESSAGE = 500

/** What a job's run is given to report its progress with (the executor's progress hook). */
export type ReportProgress = (fraction: number, message?: string) => void

export interface ProgressWriter {
  report: ReportProgress
  /** Stops writing: an update waiting for its turn is dropped; resolves once a write under way is done. */
  stop(): Promise<void>
}

/**
 * A job run's reporter whose updates reach `write` at most once per PROGRESS_WRITE_INTERVAL_MS, numbered from
 * 1. A write's failure goes to `onError` and stops nothing: progress is a courtesy, the run goes on.
 */
export function throttledProgress(
  write: (progress: JobProgress) => Promise<void> | void,
  onError: (error: unknown) => void,
): ProgressWriter {
  let seq = 0
  let lastWrite = Number.NEGATIVE_INFINITY
  let latest: { fraction: number; message: string | null } | undefined
  let written: { fraction: number; message: string | null } | undefined
  let timer: NodeJS.Timeout | undefined
  let writing: Promise<void> | undefined
  let stopped = false
  const flush = () => {
    timer = undefined
    if (stopped || latest === undefined) return
    // A slow store: the latest update waits for the write under way, never piles up behind it.
    if (writing !== undefined) {
      timer = setTimeout(flush, PROGRESS_WRITE_INTERVAL_MS)
      return
    }
    const update = latest
    latest = undefined
    // The same fraction and message again tells a reader nothing: not written.
    if (written !== undefined && update.fraction === written.fraction && update.message === written.message)
      return
    written = update
    seq++
    const progress: JobProgress = { ...update, seq }
    lastWrite = performance.now()
    writing = Promise.resolve()
      .then(() => write(progress))
      .catch(onError)
      .finally(() => {
        writing = undefined
      })
  }
  return {
    report(fraction, message) {
      if (stopped || typeof fraction !== 'number' || !Number.isFinite(fraction)) return
      latest = {
        fraction: Math.min(1, Math.max(0, fraction)),
        message: typeof message === 'string' ? message.slice(0, MAX_PROGRESS_MESSAGE) : null,
      }
      if (timer !== undefined) return
      const wait = lastWrite + PROGRESS_WRITE_INTERVAL_MS - performance.now()
      if (wait <= 0) flush()
      else timer = setTimeout(flush, wait)
    },
    async stop() {
      stopped = true
      clearTimeout(timer)
      await writing
    },
  }
}
