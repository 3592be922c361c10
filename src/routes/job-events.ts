// GET /jobs/{job_id}/events (job control, docs/jobs.md): a job's changes as Server-Sent Events, ending
// with its end. What each event says, and how one read per change serves every client of a job, is
// jobs/event-feed.ts's; here are the HTTP side, the keep-alive, and the end of the streams at a shutdown.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { JobNotFoundError, ServiceUnavailableError } from '../errors.js'
import {
  cancelledJob,
  type ExampleContext,
  JOB_ID,
  JOB_ID_PROBLEM,
  JOB_NOT_FOUND,
  STORE_UNAVAILABLE,
} from '../http/examples.js'
import { JobIdParams, validationFailed, wrappedError } from '../http/schemas.js'
import { SseStream } from '../http/sse-stream.js'
import type { JobBackend } from '../jobs/backend.js'
import { EventFeed, type JobEvent, parseEventId, type Watcher } from '../jobs/event-feed.js'
import { isEnded } from '../jobs/job.js'

export interface JobEventRouteOptions {
  backend: JobBackend
  /** Streams held at once; beyond it a new one is refused with 503. */
  maxStreams: number
}

/**
 * A comment line this often keeps proxies from closing a quiet stream; each watched job is read again
 * then too, in case a change was not heard (its store was away), and an ended stream whose client has
 * taken nothing of its end since is cut.
 */
const KEEP_ALIVE_MS = 15_000
const KEEP_ALIVE = Buffer.from(': keep-alive\n\n')
/** What a client's EventSource waits before it comes back after the stream is cut. */
const RETRY = Buffer.from('retry: 1000\n\n')
/**
 * A client this far behind (bytes written and not taken) before a write is cut off instead: it comes back
 * with Last-Event-ID. One event may be larger (an end with a large result): it is one Buffer for all.
 */
const MAX_BEHIND_BYTES = 1024 * 1024

const LastEventIdHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      description:
        'The id of the last event received: only what changed since is sent, and a stream whose job had ' +
        'already ended when that event was sent answers 204.',
    }),
  ),
})

export const jobEventRoutes: FastifyPluginAsyncTypebox<JobEventRouteOptions> = async (app, options) => {
  const { backend } = options
  const log = app.log.child({ component: 'job-events' })
  const watchers = new EventFeed({
    read: (id) => backend.read(id, Date.now()),
    onReadError: (error, failedReads) =>
      log.warn({ err: error, failed_reads: failedReads }, 'could not read watched jobs'),
    max: options.maxStreams,
  })
  // Subscribed at the first stream (and again after a failed one): an app without streams holds none.
  let subscribed: Promise<void> | undefined
  const subscribe = () => {
    subscribed ??= backend
      .onChanged((id) => watchers.changed(id))
      .catch((error: unknown) => {
        subscribed = undefined
        throw error
      })
    return subscribed
  }
  const streams = new Set<SseStream>()
  const keepAlive = setInterval(() => {
    for (const stream of streams) {
      if (stream.ended) stream.look()
      else stream.write(KEEP_ALIVE)
    }
    for (const id of [...watchers.ids()]) watchers.changed(id)
  }, KEEP_ALIVE_MS)
  keepAlive.unref()
  // Open streams would hold the server's close: they end, and their clients come back to another
  // process (or to this one restarted) with their Last-Event-ID.
  app.addHook('preClose', async () => {
    clearInterval(keepAlive)
    for (const stream of streams) stream.end()
  })

  app.get(
    '/jobs/:job_id/events',
    {
      config: { kind: 'api', errorShape: 'wrapped' },
      schema: {
        summary: "A job's changes as Server-Sent Events",
        operationId: 'streamJobEvents',
        tags: ['job-control'],
        description:
          'A text/event-stream of the job: `state` ({"job_id", "status", "started_at"}) when it is pending ' +
          'or starts running, `progress` ({"progress": 0 to 1, "message"}) as its algorithm reports it ' +
          '(a few a second at most), and `end` (the body of GET /jobs/{job_id}) once it has ended, after ' +
          'which the stream closes. Only the latest state and progress are kept: each event says what is ' +
          'true now. A client that reconnects with Last-Event-ID is sent only what changed since. Job control.',
        params: JobIdParams,
        headers: LastEventIdHeaders,
        produces: ['text/event-stream'],
        'x-examples': eventExamples,
        response: {
          200: {
            description: 'The stream of events, ending with `end`.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          204: {
            type: 'null',
            description: 'The job had already ended at the Last-Event-ID given: nothing more comes.',
          },
          404: wrappedError('JOB_NOT_FOUND: the job does not exist or has expired.'),
          422: validationFailed,
          503: wrappedError(
            'SERVICE_UNAVAILABLE: the job store is unavailable, or ALGOSERVE_MAX_EVENT_STREAMS streams are open.',
          ),
        },
      },
    },
    async (request, reply) => {
      const { job_id: id } = request.params
      const seen = parseEventId(request.headers['last-event-id'])
      const job = await backend.read(id, Date.now())
      if (job === null) throw new JobNotFoundError(id)
      const stream = new SseStream(reply.raw, MAX_BEHIND_BYTES, (behindBytes) =>
        log.info({ job_id: id, behind_bytes: behindBytes }, 'cut an event stream whose client is behind'),
      )
      const write = (events: JobEvent[]) => {
        for (const event of events) if (!stream.write(event.bytes)) return
      }
      if (isEnded(job.status)) {
        const events = watchers.eventsSince(job, seen)
        if (events.length === 0) return reply.code(204).send()
        stream.write(RETRY)
        write(events)
        stream.end()
      } else {
        await subscribe()
        const watcher: Watcher = { seen, send: write, end: () => stream.end() }
        stream.write(RETRY)
        if (!watchers.add(id, watcher))
          throw new ServiceUnavailableError('Too many job event streams are open; try again later.')
        reply.raw.once('close', () => watchers.remove(id, watcher))
      }
      // Held until its connection closes, ended or not: an end its client does not take is looked at.
      streams.add(stream)
      reply.raw.once('close', () => {
        streams.delete(stream)
        stream.end()
      })
      return reply
        .type('text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('x-accel-buffering', 'no')
        .send(stream.body)
    },
  )
}

/** The document's example: a running job reports its progress, then is cancelled. */
const eventExamples = ({ shown }: ExampleContext) => ({
  parameters: { job_id: JOB_ID },
  responses: {
    200:
      'retry: 1000\n\n' +
      `id: 1.r.0\nevent: state\ndata: {"job_id":"${JOB_ID}","status":"running","started_at":"2026-11-21T16:15:09.139+00:00"}\n\n` +
      'id: 1.r.7\nevent: progress\ndata: {"progress":0.42,"message":"sieve: 812 of 1,930 relations"}\n\n' +
      `id: 1.f.0\nevent: end\ndata: ${JSON.stringify(cancelledJob(shown))}\n\n`,
    404: JOB_NOT_FOUND,
    422: JOB_ID_PROBLEM,
    503: STORE_UNAVAILABLE,
  },
})
