// What the job-control tests (test/routes/job-control/) share: JSON calls, and a service of the file's
// own on a backend, with slow jobs (RSA-100, running until stopped) that are cancelled after each test.
import assert from 'node:assert/strict'
import { after, afterEach, before } from 'node:test'
import { shareOf } from '../../src/cluster/share.js'
import type { Config } from '../../src/config.js'
import type { BackendUnderTest } from './backends.js'
import { createJob } from './jobs.js'
import { RSA_100 } from './numbers.js'
import { type ServedApp, TEST_HTTP_PROCESSES } from './served.js'

export const CANCELLED = 'The job was cancelled.'
/** The service's ALGOSERVE_MAX_JOB_WAITERS. */
export const MAX_WAITERS = 3

export interface Answer {
  status: number
  headers: Headers
  json: Record<string, unknown>
}

export async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init)
  const text = await response.text()
  return { status: response.status, headers: response.headers, json: JSON.parse(text) }
}

export const detailOf = (answer: Answer) => answer.json.detail as Record<string, unknown>

/** Every sample of /metrics, by its name and labels as written. */
export async function samples(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const lines = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'))
  return new Map(lines.map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.split(' ').at(-1))]))
}

export interface JobControlService {
  /** The service's URL and config, once the suite's `before` has run. */
  readonly url: string
  readonly config: Config
  slowJob(webhook?: string | null): Promise<string>
  quickJob(number?: number, webhook?: string | null): Promise<string>
  cancel(id: string, body?: string): Promise<Answer>
}

/**
 * Starts the service for the suite it is called in, and closes it after: two worker threads, a 60 s
 * factorisation budget (so RSA-100 runs until stopped), webhooks to loopback. With `webhookRetryWaitsMs`
 * (no setting: the contract's schedule is fixed) the service runs in this process, which alone can take
 * it; otherwise it is served as the matrix asks (served.ts).
 */
export function jobControlService(
  backend: BackendUnderTest,
  { webhookRetryWaitsMs }: { webhookRetryWaitsMs?: readonly number[] } = {},
): JobControlService {
  let server: Omit<ServedApp, 'workers'> | undefined
  before(async () => {
    const settings = {
      jobFactorBudgetMs: 60_000,
      webhookAllowPrivate: true,
      maxJobWaiters: MAX_WAITERS,
      workerThreads: 2,
      // Each process has its own job slots: the service's two, divided as its worker threads are.
      jobConcurrency: shareOf(2, TEST_HTTP_PROCESSES),
    }
    server =
      webhookRetryWaitsMs === undefined
        ? await backend.serve(settings)
        : await backend.start(settings, { webhooks: { retryWaitsMs: webhookRetryWaitsMs } })
  })
  after(() => server?.close())
  const started = () => {
    assert.ok(server, 'the service is started')
    return server
  }

  const service: JobControlService = {
    get url() {
      return started().url
    },
    get config() {
      return started().config
    },
    async slowJob(webhook = null) {
      const created = await createJob(service.url, {
        algorithm: 'PrimeChecker',
        params: { number: RSA_100 },
        webhook,
      })
      assert.equal(created.status, 202)
      slowJobs.push(created.json.job_id as string)
      return created.json.job_id as string
    },
    async quickJob(number = 97, webhook = null) {
      const created = await createJob(service.url, {
        algorithm: 'PrimeChecker',
        params: { number },
        webhook,
      })
      assert.equal(created.status, 202)
      return created.json.job_id as string
    },
    cancel: (id, body) =>
      call(`${service.url}/jobs/${id}/cancel`, {
        method: 'POST',
        ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }),
      }),
  }

  // Slow jobs hold a worker thread for a minute: any a test leaves running (a failed assertion) is
  // cancelled after it, so that one failure does not starve the tests after it.
  const slowJobs: string[] = []
  afterEach(async () => {
    for (const id of slowJobs.splice(0)) await service.cancel(id)
  })
  return service
}
