// One webhook attempt over HTTP with undici: the POST, its headers and signature, the time limit, and
// the address rule. Names are resolved by our own lookup, which refuses non-public addresses; the
// address of every connected socket is checked again, so what is checked is what is connected to.

import type { LookupAddress, LookupOptions } from 'node:dns'
import { lookup as dnsLookup } from 'node:dns'
import type { Socket } from 'node:net'
import type { Agent } from 'undici'
import { WebhookAddressRefusedError } from '../errors.js'
import { isPublicAddress } from './address-policy.js'
import { signWebhook } from './signature.js'

/** Resolves a host name to its addresses (node:dns `lookup` with `all: true` by default). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  )

export interface SenderOptions {
  userAgent: string
  /** `whsec_` secret; null sends no `webhook-signature`. */
  secret: string | null
  allowPrivate: boolean
  /** Each attempt's time limit, in ms: connecting, sending, and reading the answer (the contract's 10 s). */
  timeoutMs?: number
  resolve?: Resolver
  /** Kept-alive connections to one receiver at most (as many as it may have attempts in flight). */
  connectionsPerReceiver?: number
}

export interface WebhookMessage {
  id: string
  url: string
  payload: string
  /** The trace context of its job, as JSON (tracing/seams.ts); absent when not traced. */
  trace?: string
}

/** How one attempt ended: `refused` (the address rule) and `gone` (410) are never retried. */
export type AttemptResult =
  | { kind: 'success'; statusCode: number }
  | { kind: 'failure'; error: string; statusCode?: number }
  | { kind: 'gone' }
  | { kind: 'refused'; error: string }
  | { kind: 'aborted' }

// Answers to webhooks are not used; a little is read so the connection can be kept.
const MAX_ANSWER_BYTES = 64 * 1024

type Undici = typeof import('undici')

export const ATTEMPT_TIMEOUT_MS = 10_000

export class WebhookSender {
  readonly #options: SenderOptions
  readonly #timeoutMs: number
  // undici is loaded at the first webhook: it adds about 14 MB to a process that may never send one.
  #client: Promise<{ undici: Undici; agent: Agent }> | undefined

  constructor(options: SenderOptions) {
    this.#options = options
    this.#timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS
  }

  #connect(): Promise<{ undici: Undici; agent: Agent }> {
    this.#client ??= import('undici').then((undici) => ({ undici, agent: this.#createAgent(undici) }))
    return this.#client
  }

  #createAgent({ Agent, buildConnector }: Undici): Agent {
    const options = this.#options
    const resolve = options.resolve ?? systemResolver
    const allowPrivate = options.allowPrivate
    const connector = buildConnector({
      timeout: this.#timeoutMs,
      lookup: (hostname: string, lookupOptions: LookupOptions, callback: LookupCallback) => {
        resolve(hostname).then(
          (addresses) => {
            const refused = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address))
            if (refused !== undefined)
              return callback(new WebhookAddressRefusedError(hostname, refused.address))
            if (addresses.length === 0) return callback(new Error(`${hostname} has no address`))
            if (lookupOptions.all) return callback(null, addresses)
            const [first] = addresses as [LookupAddress]
            callback(null, first.address, first.family)
          },
          (error: Error) => callback(error),
        )
      },
    } as Parameters<Undici['buildConnector']>[0])
    return new Agent({
      connections: options.connectionsPerReceiver ?? null,
      connect: (connectOptions, callback) =>
        connector(connectOptions, (error, socket) => {
          if (error !== null) return callback(error, null)
          const address = (socket as Socket).remoteAddress ?? ''
          if (!allowPrivate && !isPublicAddress(address)) {
            socket.destroy()
            return callback(new WebhookAddressRefusedError(connectOptions.hostname, address), null)
          }
          callback(null, socket)
        }),
    })
  }

  /** Sends one attempt. `signal` cuts it short (a shutdown): the result is then `aborted`. */
  async send(message: WebhookMessage, signal?: AbortSignal): Promise<AttemptResult> {
    if (signal?.aborted) return { kind: 'aborted' }
    // Before the time limit starts: loading the client at the first webhook is this process's time, not
    // the receiver's.
    let client: { undici: Undici; agent: Agent }
    try {
      client = await this.#connect()
    } catch (error) {
      return { kind: 'failure', error: describe(error) }
    }
    const { undici, agent } = client
    const timestamp = Math.floor(Date.now() / 1000)
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': this.#options.userAgent,
      'webhook-id': message.id,
      'webhook-timestamp': String(timestamp),
    }
    if (this.#options.secret !== null) {
      headers['webhook-signature'] = signWebhook(this.#options.secret, message.id, timestamp, message.payload)
    }
    // One controller and one timer, cleared at the end: AbortSignal.timeout and AbortSignal.any cost
    // several times as much, and the former's timer outlives the attempt.
    const attempt = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      attempt.abort()
    }, this.#timeoutMs)
    const cutShort = () => attempt.abort()
    signal?.addEventListener('abort', cutShort)
    try {
      if (signal?.aborted) return { kind: 'aborted' }
      const answer = await undici.request(message.url, {
        method: 'POST',
        headers,
        body: message.payload,
        dispatcher: agent,
        signal: attempt.signal,
      })
      await answer.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => undefined)
      const status = answer.statusCode
      if (status >= 200 && status < 300) return { kind: 'success', statusCode: status }
      if (status === 410) return { kind: 'gone' }
      // Redirects are not followed (undici's request follows none): they count as failures.
      return { kind: 'failure', error: `the receiver answered ${status}`, statusCode: status }
    } catch (error) {
      if (signal?.aborted) return { kind: 'aborted' }
      const refused = findRefusal(error)
      if (refused !== undefined) return { kind: 'refused', error: refused.message }
      if (timedOut) return { kind: 'failure', error: `no answer within ${this.#timeoutMs} ms` }
      return { kind: 'failure', error: describe(error) }
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', cutShort)
    }
  }

  async close(): Promise<void> {
    if (this.#client !== undefined) await (await this.#client).agent.destroy()
  }
}

type LookupCallback = (error: Error | null, address?: string | LookupAddress[], family?: number) => void

function findRefusal(error: unknown): WebhookAddressRefusedError | undefined {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e instanceof WebhookAddressRefusedError) return e
  }
  return undefined
}

/** A short reason for the log and the store: the error's code and message, never a stack. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const code = (error as { code?: string }).code
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
  return `${code ? `${code} ` : ''}${error.message}${cause}`
}
