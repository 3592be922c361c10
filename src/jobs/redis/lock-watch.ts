// A run whose lock has lapsed is stopped. BullMQ renews the lock of each job a Worker runs, but when a
// renewal fails it only says so (an event), and when Redis cannot be reached at all it says nothing: the
// run would go on unseen while another worker, once the lock lapses, runs the job again; and were this
// worker the one to take the job again, the old run's end would stop the renewals of the new run (BullMQ
// tracks locks by job id), so the job would be lost again and again until it fails. A lock lives lockMs
// from its last renewal, so a run not renewed for that long is no longer this worker's.
import type { Worker } from 'bullmq'
import type { FastifyBaseLogger } from 'fastify'
import { LockLostAbort } from '../../errors.js'

interface WatchedRun {
  renewedAt: number
  stop: AbortController
  lost: boolean
}

export class LockWatch {
  readonly #runs = new Map<string, WatchedRun>()
  readonly #lockMs: number
  readonly #log: FastifyBaseLogger
  #timer: NodeJS.Timeout | undefined

  constructor(lockMs: number, log: FastifyBaseLogger) {
    this.#lockMs = lockMs
    this.#log = log
  }

  /** Follows `worker`'s renewals, and checks its runs' locks until it closes. */
  follow(worker: Worker): void {
    worker.on('locksRenewed', ({ jobIds }) => {
      const now = Date.now()
      for (const id of jobIds) {
        const run = this.#runs.get(id)
        if (run !== undefined) run.renewedAt = now
      }
    })
    // Redis answered that the lock is gone or another worker's.
    worker.on('lockRenewalFailed', (jobIds) => {
      for (const id of jobIds) this.#lost(id, worker.name)
    })
    this.#timer = setInterval(() => {
      const now = Date.now()
      for (const [id, run] of this.#runs) {
        if (now - run.renewedAt > this.#lockMs) this.#lost(id, worker.name)
      }
    }, this.#lockMs / 4)
    this.#timer.unref()
    worker.on('closed', () => clearInterval(this.#timer))
  }

  /**
   * The signal that stops job `id`'s run once its lock is lost, or once one of `alsoWhen` aborts (with
   * its reason): one signal for every cause, where AbortSignal.any made one more per run. `end` once the
   * run is over.
   */
  watch(
    id: string,
    alsoWhen: (AbortSignal | undefined)[],
  ): { signal: AbortSignal; lost: () => boolean; end: () => void } {
    // Taken just now: the lock was set when the job was taken.
    const run: WatchedRun = { renewedAt: Date.now(), stop: new AbortController(), lost: false }
    this.#runs.set(id, run)
    const links: [AbortSignal, () => void][] = []
    for (const cause of alsoWhen) {
      if (cause === undefined) continue
      if (cause.aborted) {
        run.stop.abort(cause.reason)
        break
      }
      const stop = () => run.stop.abort(cause.reason)
      cause.addEventListener('abort', stop, { once: true })
      links.push([cause, stop])
    }
    return {
      signal: run.stop.signal,
      lost: () => run.lost,
      end: () => {
        for (const [cause, stop] of links) cause.removeEventListener('abort', stop)
        if (this.#runs.get(id) === run) this.#runs.delete(id)
      },
    }
  }

  #lost(id: string, queue: string): void {
    const run = this.#runs.get(id)
    if (run === undefined || run.lost) return
    run.lost = true
    this.#log.warn(
      { job_id: id, queue },
      'a run is stopped: its lock could not be renewed (Redis out of reach), so another worker runs it',
    )
    run.stop.abort(new LockLostAbort(`the lock of ${id} lapsed`))
  }
}
