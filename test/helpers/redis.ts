// A real redis-server for the tests that need one: on a free loopback port, in a temporary directory,
// with AOF on and noeviction (what docs/distributed.md asks of operators). Never the machine's own Redis.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import primeChecker from '../../src/algorithms/prime-checker/index.js'
import { jobQueueName, queueKey } from '../../src/jobs/redis/queues.js'
import { until } from './time.js'

function findRedisServer(): string | undefined {
  const candidates = [
    '/usr/bin/redis-server',
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'redis-server')),
  ]
  return candidates.find((path) => {
    try {
      accessSync(path, constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

export const REDIS_SERVER = findRedisServer()

/** For `describe`/`test` options: the visible reason Redis tests are skipped, or false. */
export const skipWithoutRedis: string | false =
  REDIS_SERVER === undefined ? 'redis-server not found: Redis tests skipped' : false

/** A fresh key prefix: each test's jobs are its own. */
export const freshPrefix = (): string => `t${randomBytes(4).toString('hex')}`

export async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

/**
 * Sends one inline command (arguments without spaces) and resolves with the answer's text: a status,
 * an error, an integer or a bulk string as is, an array's elements one a line.
 */
export async function redisCommand(port: number, command: string): Promise<string> {
  const socket = createConnection({ port, host: '127.0.0.1' })
  socket.setEncoding('utf8')
  try {
    await once(socket, 'connect')
    socket.write(`${command}\r\n`)
    let answer = ''
    for (;;) {
      const parsed = parseReply(answer)
      if (parsed !== undefined) return parsed
      const [chunk] = await once(socket, 'data')
      answer += chunk
    }
  } finally {
    socket.destroy()
  }
}

/** A complete RESP2 reply of one level (an array of bulk strings at most), or undefined while incomplete. */
function parseReply(text: string): string | undefined {
  const lines = text.split('\r\n')
  const bulk = (at: number): [string, number] | undefined => {
    const head = lines[at]
    if (head === undefined || at + 1 >= lines.length) return undefined
    if (head === '$-1') return ['', at + 1]
    return at + 2 < lines.length ? [lines[at + 1] as string, at + 2] : undefined
  }
  const [first = ''] = lines
  if (lines.length < 2) return undefined
  if (first[0] === '+' || first[0] === '-') return first
  if (first[0] === ':') return first.slice(1)
  if (first[0] === '$') return bulk(0)?.[0]
  const values: string[] = []
  let at = 1
  for (let i = 0; i < Number(first.slice(1)); i++) {
    const entry = bulk(at)
    if (entry === undefined) return undefined
    values.push(entry[0])
    at = entry[1]
  }
  return values.join('\n')
}

export interface RedisServer {
  port: number
  url: string
  dir: string
  process: ChildProcess
  /** Kills redis-server with `signal` and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>
  /** Starts it again on the same port and directory (so from its AOF), with `extraArgs` this time. */
  restart(extraArgs?: string[]): Promise<void>
  /** Stops it and removes its directory. */
  close(): Promise<void>
}

export async function startRedis(extraArgs: string[] = [], port?: number): Promise<RedisServer> {
  if (REDIS_SERVER === undefined) throw new Error('redis-server not found')
  const dir = mkdtempSync(join(tmpdir(), 'algoserve-redis-'))
  const chosen = port ?? (await freePort())
  const args = [
    '--port',
    String(chosen),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'yes',
    '--appendfsync',
    'everysec',
    '--maxmemory-policy',
    'noeviction',
    ...extraArgs,
  ]
  let child: ChildProcess
  let output = ''
  const launch = async (extra: string[] = []) => {
    child = spawn(REDIS_SERVER as string, [...args, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout?.on('data', (chunk) => {
      output += chunk
    })
    child.stderr?.on('data', (chunk) => {
      output += chunk
    })
    await until(
      // With a password (requirepass), an answer that asks for it says the server is up as well.
      async () => /^(\+PONG|-NOAUTH)/.test(await redisCommand(chosen, 'PING').catch(() => '')),
      10_000,
      () => `redis-server answered PING: ${output}`,
      20,
    )
  }
  await launch()
  const server: RedisServer = {
    port: chosen,
    url: `redis://127.0.0.1:${chosen}`,
    dir,
    get process() {
      return child
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, 'exit')
      child.kill(signal)
      await exited
    },
    async restart(extraArgs) {
      await launch(extraArgs)
    },
    async close() {
      await server.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return server
}

/** For `test` options: the reason TLS tests are skipped (redis-server built without TLS), or false. */
export function skipWithoutRedisTls(): string | false {
  if (REDIS_SERVER === undefined) return 'redis-server not found: Redis TLS tests skipped'
  // A TLS-capable redis-server complains of the missing key file; one without TLS of the directive.
  const probe = spawnSync(
    REDIS_SERVER,
    ['--port', '0', '--tls-port', '1', '--tls-cert-file', '/nonexistent'],
    {
      encoding: 'utf8',
      timeout: 5000,
    },
  )
  return /tls-key-file|Failed to configure TLS/.test(`${probe.stdout}${probe.stderr}`)
    ? false
    : 'redis-server has no TLS support: Redis TLS tests skipped'
}

export interface TlsFiles {
  dir: string
  /** The CA's certificate (PEM). */
  ca: string
  /** redis-server's certificate for 127.0.0.1, signed by the CA, and its key. */
  cert: string
  key: string
}

/** A CA of its own and a server certificate for 127.0.0.1 signed by it, made with openssl. */
export function makeTlsFiles(): TlsFiles {
  const dir = mkdtempSync(join(tmpdir(), 'algoserve-tls-'))
  const file = (name: string) => join(dir, name)
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' })
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=algoserve test CA',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
  )
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    file('server.key'),
    '-out',
    file('server.csr'),
  )
  writeFileSync(file('san.cnf'), 'subjectAltName=IP:127.0.0.1\n')
  openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    file('san.cnf'),
    '-out',
    file('server.pem'),
  )
  return { dir, ca: file('ca.pem'), cert: file('server.pem'), key: file('server.key') }
}

export interface RedisCluster {
  /** host:port of each primary. */
  nodes: string[]
  /** Each primary's redis-server (on the plain ports), in the order of `nodes`. */
  servers: RedisServer[]
  /** The settings a service is given: the first node as URL, and every node. */
  env: (prefix: string) => Record<string, string>
  /** The primary that holds `key`'s slot now, as that primary itself says. */
  holder(key: string): Promise<RedisServer>
  close(): Promise<void>
}

export interface RedisClusterOptions {
  /** Each node also listens with TLS and the nodes talk TLS to one another. */
  tls?: TlsFiles
  /** The nodes' ports (to start a cluster where a service already looks for one); free ones otherwise. */
  ports?: number[]
  /** Arguments of the node at `index` beyond the usual ones. */
  nodeArgs?: (index: number) => string[]
}

/** Whether the `CLUSTER NODES` line of a node serves `slot` (ranges, and slots it is importing, aside). */
function servesSlot(line: string, slot: number): boolean {
  return line
    .split(' ')
    .slice(8)
    .some((range) => {
      const [from, to = from] = range.split('-').map(Number) as [number, number?]
      return !range.startsWith('[') && from <= slot && slot <= (to as number)
    })
}

/**
 * A Redis Cluster of three primaries (no replicas) on loopback ports: each redis-server with cluster
 * mode on, joined by `redis-cli --cluster create`; ready once every node says the cluster is ok. With
 * `tls`, `nodes` and `env` are the TLS ports (the plain ones stay for the test's own questions). A node
 * restarted (`servers[i].restart()`) rejoins with its nodes.conf and AOF, in its directory.
 */
export async function startRedisCluster({
  tls,
  ports = [],
  nodeArgs,
}: RedisClusterOptions = {}): Promise<RedisCluster> {
  const servers: RedisServer[] = []
  const tlsPorts: number[] = []
  try {
    for (let i = 0; i < 3; i++) {
      const port = ports[i] ?? (await freePort())
      const tlsArgs: string[] = []
      if (tls !== undefined) {
        tlsPorts.push(await freePort())
        tlsArgs.push('--tls-port', String(tlsPorts[i]), '--tls-cluster', 'yes', '--tls-auth-clients', 'no')
        tlsArgs.push('--tls-cert-file', tls.cert, '--tls-key-file', tls.key, '--tls-ca-cert-file', tls.ca)
      }
      servers.push(
        await startRedis(
          [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            `nodes-${port}.conf`,
            ...tlsArgs,
            ...(nodeArgs?.(i) ?? []),
          ],
          port,
        ),
      )
    }
    const nodes = servers.map((server) => `127.0.0.1:${server.port}`)
    const served = tls === undefined ? nodes : tlsPorts.map((port) => `127.0.0.1:${port}`)
    const cli = join(dirname(REDIS_SERVER as string), 'redis-cli')
    execFileSync(cli, ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], {
      stdio: 'pipe',
    })
    for (const server of servers) {
      await until(
        async () => (await redisCommand(server.port, 'CLUSTER INFO')).includes('cluster_state:ok'),
        15_000,
        `node ${server.port} sees the cluster ok`,
        50,
      )
    }
    return {
      nodes: served,
      servers,
      async holder(key) {
        const [first] = servers as [RedisServer]
        const slot = Number(await redisCommand(first.port, `CLUSTER KEYSLOT ${key}`))
        for (const server of servers) {
          const myself = (await redisCommand(server.port, 'CLUSTER NODES'))
            .split('\n')
            .find((line) => line.includes('myself'))
          if (myself !== undefined && servesSlot(myself, slot)) return server
        }
        throw new Error(`no node serves slot ${slot}`)
      },
      env: (prefix) => ({
        ALGOSERVE_REDIS_URL: `${tls === undefined ? 'redis' : 'rediss'}://${served[0]}`,
        ALGOSERVE_REDIS_CLUSTER_NODES: served.join(','),
        ALGOSERVE_REDIS_PREFIX: prefix,
        ...(tls === undefined ? {} : { ALGOSERVE_REDIS_TLS_CA_FILE: tls.ca }),
      }),
      close: async () => {
        await Promise.all(servers.map((server) => server.close()))
      },
    }
  } catch (error) {
    await Promise.all(servers.map((server) => server.close()))
    throw error
  }
}

export interface RedisSentinelSet {
  primary: RedisServer
  replica: RedisServer
  /** Every replica (`replica` is the first). */
  replicas: RedisServer[]
  /** host:port of the first sentinel. */
  sentinel: string
  /** host:port of every sentinel (`sentinel` is the first). */
  sentinels: string[]
  name: string
  /** host:port of the primary the first sentinel names now. */
  primaryAddress(): Promise<string>
  /** The server that is the primary now (after failovers, one of the first replicas perhaps). */
  currentPrimary(): Promise<RedisServer>
  close(): Promise<void>
}

/**
 * A primary, `replicaCount` replicas and `sentinelCount` sentinels watching them (quorum: a majority of
 * the sentinels), on free loopback ports: enough for a service to find its primary through Sentinel
 * and to follow a failover. Ready once every sentinel sees the replicas and the other sentinels.
 */
export async function startRedisSentinel(replicaCount = 1, sentinelCount = 1): Promise<RedisSentinelSet> {
  const name = 'algoserve-test'
  const primary = await startRedis()
  const replicas: RedisServer[] = []
  const sentinels: Array<{ port: number; dir: string; process: ChildProcess }> = []
  const close = async () => {
    for (const sentinel of sentinels) {
      if (sentinel.process.exitCode === null && sentinel.process.signalCode === null) {
        const exited = once(sentinel.process, 'exit')
        sentinel.process.kill('SIGKILL')
        await exited
      }
      rmSync(sentinel.dir, { recursive: true, force: true })
    }
    await Promise.all([primary, ...replicas].map((server) => server.close()))
  }
  try {
    for (let i = 0; i < replicaCount; i++) {
      replicas.push(await startRedis(['--replicaof', '127.0.0.1', String(primary.port)]))
    }
    const quorum = Math.floor(sentinelCount / 2) + 1
    for (let i = 0; i < sentinelCount; i++) {
      const port = await freePort()
      const dir = mkdtempSync(join(tmpdir(), 'algoserve-sentinel-'))
      const config = join(dir, 'sentinel.conf')
      writeFileSync(
        config,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${primary.port} ${quorum}`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 5000`,
          '',
        ].join('\n'),
      )
      const child = spawn(REDIS_SERVER as string, [config, '--sentinel'], { stdio: 'ignore' })
      sentinels.push({ port, dir, process: child })
    }
    for (const { port } of sentinels) {
      await until(
        async () => {
          const master = await redisCommand(port, `SENTINEL MASTER ${name}`).catch(() => '')
          return (
            new RegExp(`num-slaves\n${replicaCount}\n`).test(master) &&
            new RegExp(`num-other-sentinels\n${sentinelCount - 1}\n`).test(master)
          )
        },
        20_000,
        `sentinel ${port} sees the primary, its replicas and the other sentinels`,
        50,
      )
    }
  } catch (error) {
    await close()
    throw error
  }
  const first = sentinels[0] as { port: number }
  const primaryAddress = async () =>
    (await redisCommand(first.port, `SENTINEL GET-MASTER-ADDR-BY-NAME ${name}`)).replace('\n', ':')
  return {
    primary,
    replica: replicas[0] as RedisServer,
    replicas,
    sentinel: `127.0.0.1:${first.port}`,
    sentinels: sentinels.map(({ port }) => `127.0.0.1:${port}`),
    name,
    primaryAddress,
    currentPrimary: async () => {
      const address = await primaryAddress()
      const server = [primary, ...replicas].find((each) => address === `127.0.0.1:${each.port}`)
      if (server === undefined) throw new Error(`the sentinel names an unknown primary ${address}`)
      return server
    },
    close,
  }
}

/** The name of the BullMQ queue that holds the jobs of `algorithm` at `version` (one queue per version). */
export const jobQueueOf = (algorithm: string, version: string): string =>
  jobQueueName(queueKey(algorithm, version))

/** The queue of the built-in PrimeChecker's jobs. */
export const PRIME_CHECKER_QUEUE = jobQueueOf(primeChecker.name, primeChecker.version)
