// How this deployment reaches Redis, from its settings: one server (the URL), a Redis Cluster (its nodes,
// with the URL's user, password and TLS), or a primary found through Sentinel. Every connection of the
// backend is made here, so that each kind gets the same credentials, TLS and options.
import { readFileSync } from 'node:fs'
import type { ConnectionOptions } from 'node:tls'
import { Cluster, Redis, type RedisOptions } from 'ioredis'

export interface RedisTopology {
  /** redis:// or rediss://: the server, or with nodes or sentinels only its user, password and TLS. */
  url: string
  clusterNodes?: readonly string[]
  sentinels?: readonly string[]
  sentinelName?: string | null
  /** A PEM file of the CA that signed Redis's certificate. */
  tlsCaFile?: string | null
}

/** What a connection is given beyond the topology; `maxRetriesPerRequest` and the like. */
export type ConnectionSettings = Pick<
  RedisOptions,
  'enableOfflineQueue' | 'maxRetriesPerRequest' | 'commandTimeout' | 'retryStrategy'
>

export type RedisClient = Redis | Cluster

const hostPort = (entry: string): { host: string; port: number } => {
  const at = entry.lastIndexOf(':')
  return { host: entry.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(entry.slice(at + 1)) }
}

/** The URL's credentials and TLS, as ioredis options. */
function access(topology: RedisTopology): RedisOptions {
  const url = new URL(topology.url)
  const tls: ConnectionOptions | undefined =
    url.protocol !== 'rediss:'
      ? undefined
      : topology.tlsCaFile
        ? { ca: readFileSync(topology.tlsCaFile, 'utf8') }
        : {}
  return {
    ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
    ...(tls === undefined ? {} : { tls }),
  }
}

export function connect(topology: RedisTopology, settings: ConnectionSettings): RedisClient {
  const credentials = access(topology)
  if (topology.clusterNodes !== undefined && topology.clusterNodes.length > 0) {
    const { enableOfflineQueue, retryStrategy, ...perNode } = settings
    return new Cluster(topology.clusterNodes.map(hostPort), {
      redisOptions: { ...credentials, ...perNode },
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      ...(retryStrategy === undefined ? {} : { clusterRetryStrategy: retryStrategy }),
      // Nodes are reached by the names given, so that TLS checks their certificates against those names.
      ...(credentials.tls === undefined ? {} : { dnsLookup: (address, callback) => callback(null, address) }),
    })
  }
  if (topology.sentinels !== undefined && topology.sentinels.length > 0) {
    const db = Number(new URL(topology.url).pathname.slice(1) || 0)
    return new Redis({
      ...credentials,
      ...settings,
      db,
      sentinels: topology.sentinels.map(hostPort),
      name: topology.sentinelName ?? '',
      // The sentinels are reached with the same TLS as the servers, and without the servers' password.
      ...(credentials.tls === undefined
        ? {}
        : { enableTLSForSentinelMode: true, sentinelTLS: credentials.tls }),
    })
  }
  // ioredis reads the user, password and database from the URL itself.
  return new Redis(
    topology.url,
    credentials.tls === undefined ? settings : { ...settings, tls: credentials.tls },
  )
}

/** Each server behind a client: every node of a Cluster (primaries and replicas), or the one server. */
export function serversOf(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('all') : [client]
}

/**
 * Pings the server that holds `key`: on a Cluster a PING goes to any node, while the deployment's
 * keys are on the one that holds their slot.
 */
export async function pingHolder(client: RedisClient, key: string): Promise<boolean> {
  if (!(client instanceof Cluster)) return (await client.ping()) === 'PONG'
  await client.exists(key)
  return true
}

/** Where Redis is, for the log: hosts and ports only (the URL may hold a user and a password). */
export function redisAddress(topology: RedisTopology): string {
  if (topology.clusterNodes !== undefined && topology.clusterNodes.length > 0) {
    return `cluster ${topology.clusterNodes.join(',')}`
  }
  if (topology.sentinels !== undefined && topology.sentinels.length > 0) {
    return `sentinel ${topology.sentinelName} at ${topology.sentinels.join(',')}`
  }
  const { hostname, port } = new URL(topology.url)
  return `${hostname}:${port === '' ? '6379' : port}`
}
