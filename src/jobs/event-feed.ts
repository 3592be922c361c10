// Streams of a job's events (GET /jobs/{job_id}/events): what a client is sent, and the hub that sends
// it. A job's events are its state (pending, running), its progress while it runs, and its end (the
// job's body, as GET /jobs/{job_id} gives it). Only the latest of each is kept, so a stream sends what
// changed since what its client last saw: the event id says what that was, and a client that comes
// back with it (Last-Event-ID) is sent only what it has not seen.
//
// However many clients watch a job, the hub reads it once per change (the backend's one subscription
// says which job may have changed), one read at a time per job, and each client is sent its own
// difference from that read. An event is made once while any stream still holds it: the streams of a
// job share its bytes (an end whose result is 8 MB is one Buffer for a hundred clients, not a hundred).

import { isEnded, type JobRecord, type JobState } from './job.js'
import { jobStatusJson, progressJson } from './job-view.js'
import { jsonText, jsonTime } from './json-text.js'

/**
 * One Server-Sent Event as it goes on the wire: its bytes are made once and the same Buffer is written to
 * every stream it goes to (a Buffer written to a socket is not copied, where a string is encoded per write).
 */
export interface JobEvent {
  id: string
  event: 'state' | 'progress' | 'end'
  bytes: Buffer
}

/** Makes the event `id` of kind `event` whose data is `data()`; the hub's reuses one it has made already. */
export type MakeEvent = (id: string, event: JobEvent['event'], data: () => string) => JobEvent

const jobEvent: MakeEvent = (id, event, data) => ({
  id,
  event,
  bytes: Buffer.from(`id: ${id}\nevent: ${event}\ndata: ${data()}\n\n`),
})

/** What a client has seen of a job: the run, its state and the progress update (0 for none). */
export interface Seen {
  runs: number
  status: JobState
  seq: number
}

const LETTERS: Record<JobState, string> = { pending: 'p', running: 'r', completed: 'c', failed: 'f' }
const STATES: Record<string, JobState> = { p: 'pending', r: 'running', c: 'completed', f: 'failed' }

/** The event id of what a client has seen once sent an event: `<runs>.<state letter>.<progress seq>`. */
export const eventId = ({ runs, status, seq }: Seen): string => `${runs}.${LETTERS[status]}.${seq}`

/** A Last-Event-ID read back into what it says was seen; null when it is none of ours. */
export function parseEventId(text: string | undefined): Seen | null {
  const match = text === undefined ? null : /^([0-9]{1,9})\.([prcf])\.([0-9]{1,15})$/.exec(text)
  if (match === null) return null
  return { runs: Number(match[1]), status: STATES[match[2] as string] as JobState, seq: Number(match[3]) }
}

const seenOf = (job: JobRecord): Seen => ({ runs: job.runs, status: job.status, seq: job.progress?.seq ?? 0 })

/** The events that bring a client that has seen `seen` (null: nothing) up to `job`. */
export function eventsSince(job: JobRecord, seen: Seen | null, make: MakeEvent = jobEvent): JobEvent[] {
  const now = seenOf(job)
  if (isEnded(job.status)) {
    if (seen !== null && isEnded(seen.status) && seen.runs === now.runs) return []
    return [make(eventId({ ...now, seq: 0 }), 'end', () => jobStatusJson(job))]
  }
  const events: JobEvent[] = []
  const sameRun = seen !== null && seen.runs === now.runs && seen.status === now.status
  if (!sameRun) {
    const state = () =>
      `{"job_id":${jsonText(job.id)},"status":${jsonText(job.status)},` +
      `"started_at":${jsonTime(job.startedAt)}}`
    events.push(make(eventId({ ...now, seq: 0 }), 'state', state))
  }
  const progress = job.progress
  if (progress !== null && (!sameRun || seen.seq !== now.seq))
    events.push(make(eventId(now), 'progress', () => progressJson(progress)))
  return events
}

/** One client's stream, as the hub drives it. */
export interface Watcher {
  /** What it has been sent (or had seen when it came back); updated by the hub. */
  seen: Seen | null
  send(events: JobEvent[]): void
  /** The job has ended (its end was sent) or is gone: the stream ends. */
  end(): void
}

/** How often failed reads of watched jobs are reported, at most. */
const READ_ERROR_REPORT_MS = 60_000

export class EventFeed {
  readonly #read: (id: string) => Promise<JobRecord | null>
  readonly #onReadError: (error: unknown, failedReads: number) => void
  readonly #reportEveryMs: number
  readonly #max: number
  // Reads failed since the last report, and when that was: a store that is away fails every watched
  // job's read at each keep-alive round, which is one report, not one per job.
  #failedReads = 0
  #reportedAt = Number.NEGATIVE_INFINITY
  readonly #byId = new Map<string, Set<Watcher>>()
  // Jobs being read now; true when a change came during the read: it is read again after.
  readonly #reading = new Map<string, boolean>()
  #count = 0
  // The events made, by job and event id, for as long as a stream holds them (an event id says all
  // its data: the same id of the same job is the same event).
  readonly #made = new Map<string, WeakRef<JobEvent>>()
  readonly #forgotten = new FinalizationRegistry<string>((key) => {
    if (this.#made.get(key)?.deref() === undefined) this.#made.delete(key)
  })
  readonly #make =
    (jobId: string): MakeEvent =>
    (id, event, data) => {
      const key = `${jobId} ${id}`
      let made = this.#made.get(key)?.deref()
      if (made === undefined) {
        made = jobEvent(id, event, data)
        this.#made.set(key, new WeakRef(made))
        this.#forgotten.register(made, key)
      }
      return made
    }

  constructor(options: {
    read: (id: string) => Promise<JobRecord | null>
    /**
     * Told of a failed read with the count failed since it was last told, at most once per `reportEveryMs`.
     */
    onReadError: (error: unknown, failedReads: number) => void
    reportEveryMs?: number
    max: number
  }) {
    this.#read = options.read
    this.#onReadError = options.onReadError
    this.#reportEveryMs = options.reportEveryMs ?? READ_ERROR_REPORT_MS
    this.#max = options.max
  }

  /** Streams held now. */
  get count(): number {
    return this.#count
  }

  /** The ids of the jobs watched now. */
  ids(): IterableIterator<string> {
    return this.#byId.keys()
  }

  /** eventsSince, with the events shared with every other stream that holds them now. */
  eventsSince(job: JobRecord, seen: Seen | null): JobEvent[] {
    return eventsSince(job, seen, this.#make(job.id))
  }

  /** Holds `watcher` on job `id` and reads the job for it; false when `max` are held already. */
  add(id: string, watcher: Watcher): boolean {
    if (this.#count >= this.#max) return false
    this.#count++
    let set = this.#byId.get(id)
    if (set === undefined) {
      set = new Set()
      this.#byId.set(id, set)
    }
    set.add(watcher)
    this.changed(id)
    return true
  }

  remove(id: string, watcher: Watcher): void {
    const set = this.#byId.get(id)
    if (set === undefined || !set.delete(watcher)) return
    this.#count--
    if (set.size === 0) this.#byId.delete(id)
  }

  /** Job `id` may have changed: read it (once, however many watch it) and send each watcher its events. */
  changed(id: string): void {
    if (!this.#byId.has(id)) return
    if (this.#reading.has(id)) {
      this.#reading.set(id, true)
      return
    }
    this.#reading.set(id, false)
    void this.#readAndSend(id)
  }

  async #readAndSend(id: string): Promise<void> {
    do {
      this.#reading.set(id, false)
      let job: JobRecord | null
      try {
        job = await this.#read(id)
      } catch (error) {
        // The store is away: the next change, or the keep-alive round, reads again.
        this.#readFailed(error)
        break
      }
      // Watchers of a job have mostly seen the same: their events are made once per what they saw.
      const made = new Map<string, JobEvent[]>()
      for (const watcher of this.#byId.get(id) ?? []) this.#deliver(id, watcher, job, made)
    } while (this.#reading.get(id) === true && this.#byId.has(id))
    this.#reading.delete(id)
  }

  #readFailed(error: unknown): void {
    this.#failedReads++
    const now = Date.now()
    if (now - this.#reportedAt < this.#reportEveryMs) return
    this.#reportedAt = now
    this.#onReadError(error, this.#failedReads)
    this.#failedReads = 0
  }

  #deliver(id: string, watcher: Watcher, job: JobRecord | null, made: Map<string, JobEvent[]>): void {
    if (job === null) {
      this.remove(id, watcher)
      watcher.end()
      return
    }
    const key = watcher.seen === null ? '' : eventId(watcher.seen)
    let events = made.get(key)
    if (events === undefined) {
      events = this.eventsSince(job, watcher.seen)
      made.set(key, events)
    }
    if (events.length > 0) {
      watcher.send(events)
      watcher.seen = seenOf(job)
    }
    if (isEnded(job.status)) {
      this.remove(id, watcher)
      watcher.end()
    }
  }
}
