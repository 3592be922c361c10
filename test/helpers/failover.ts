// A Sentinel failover under load, as the Sentinel test and the failover benchmark both drive it: jobs
// posted steadily by a few clients, the primary SIGKILLed, and what the clients saw until the service
// accepts jobs again from the promoted replica.
import { setTimeout as sleep } from 'node:timers/promises'
import { type RedisSentinelSet, type RedisServer, redisCommand } from './redis.js'

export interface FailoverOptions {
  /** Clients posting one job after another. */
  clients?: number
  /** Jobs accepted before the kill, and after the promotion before the load stops. */
  before?: number
  after?: number
  /** The load stops after this long whatever happened. */
  timeoutMs?: number
  /**
   * Replicas cut off for this long before the primary is killed, so that the jobs written meanwhile
   * reach none of them: each is pointed at a port where nothing listens (REPLICAOF), too briefly for
   * the sentinels to set it back.
   */
  lagMs?: number
}

export interface FailoverRun {
  /** Ids of the jobs answered 202. */
  accepted: string[]
  /** Answers by status (0: no answer within 10 s). */
  statuses: Record<number, number>
  /** What should never be answered: a status other than 202 or 503, a 503 without Retry-After, a hang. */
  unexpected: string[]
  /** From the kill to the sentinel naming another primary; undefined if it never did. */
  promotionMs?: number
  /** From the promotion to /readyz 200, and to the first 202 sent after it. */
  readyMs?: number
  firstAcceptedMs?: number
  /** Accepted jobs that are not found after the failover. */
  lost: string[]
  /** The primary that was killed (to restart it as a replica). */
  killed?: RedisServer
}

const ANSWER_WAIT_MS = 10_000

export async function failoverUnderLoad(
  url: string,
  set: RedisSentinelSet,
  { clients = 4, before = 40, after = 40, timeoutMs = 30_000, lagMs = 0 }: FailoverOptions = {},
): Promise<FailoverRun> {
  const run: FailoverRun = { accepted: [], statuses: {}, unexpected: [], lost: [] }
  const deadline = Date.now() + timeoutMs
  let killedAt = 0
  let promotedAt = 0
  let acceptedAfter = 0
  let stop = false
  const poster = async (client: number) => {
    for (let n = 0; !stop && Date.now() < deadline; n++) {
      const sent = Date.now()
      let status = 0
      try {
        const response = await fetch(`${url}/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            algorithm: 'PrimeChecker',
            params: { number: String(1000 + client * 1e6 + n) },
          }),
          signal: AbortSignal.timeout(ANSWER_WAIT_MS),
        })
        status = response.status
        const body = (await response.json()) as { job_id?: string }
        if (status === 202) {
          run.accepted.push(body.job_id as string)
          if (promotedAt > 0 && sent >= promotedAt) {
            run.firstAcceptedMs ??= Date.now() - promotedAt
            acceptedAfter++
          }
        } else if (status === 503) {
          if (!response.headers.get('retry-after')) run.unexpected.push('a 503 without Retry-After')
          await sleep(20)
        } else {
          run.unexpected.push(`${status} ${JSON.stringify(body)}`)
        }
      } catch (error) {
        run.unexpected.push(`no answer: ${(error as Error).message}`)
      }
      run.statuses[status] = (run.statuses[status] ?? 0) + 1
    }
  }
  const watcher = async () => {
    while (run.accepted.length < before && Date.now() < deadline) await sleep(10)
    const primary = await set.currentPrimary()
    run.killed = primary
    const address = `127.0.0.1:${primary.port}`
    if (lagMs > 0) {
      const replicas = [set.primary, ...set.replicas].filter((server) => server !== primary)
      for (const replica of replicas) await redisCommand(replica.port, 'REPLICAOF 127.0.0.1 1')
      await sleep(lagMs)
    }
    await primary.kill('SIGKILL')
    killedAt = Date.now()
    while (Date.now() < deadline) {
      if ((await set.primaryAddress().catch(() => address)) !== address) {
        promotedAt = Date.now()
        run.promotionMs = promotedAt - killedAt
        break
      }
      await sleep(50)
    }
    while (promotedAt > 0 && run.readyMs === undefined && Date.now() < deadline) {
      const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(ANSWER_WAIT_MS) }).catch(
        () => undefined,
      )
      if (ready?.status === 200) run.readyMs = Date.now() - promotedAt
      else await sleep(50)
    }
    while (acceptedAfter < after && Date.now() < deadline) await sleep(20)
    stop = true
  }
  await Promise.all([watcher(), ...Array.from({ length: clients }, (_, client) => poster(client))])
  for (const id of run.accepted) {
    const response = await fetch(`${url}/jobs/${id}`)
    await response.arrayBuffer()
    if (response.status === 404) run.lost.push(id)
  }
  return run
}
