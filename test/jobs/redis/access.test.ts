// Redis as operators secure it: an ACL user with a password, and TLS with a private CA (to a server, to
// a sentinel and the primary it names, and to a Cluster). A job runs end to end through each, the password
// never shows in the log or /metrics, and a certificate that cannot be checked stops the connection (said in
// the log) rather than being skipped.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { type Child, listening, start } from '../../helpers/child.js'
import { createJob, waitForJob } from '../../helpers/jobs.js'
import {
  freePort,
  freshPrefix,
  makeTlsFiles,
  REDIS_SERVER,
  type RedisServer,
  redisCommand,
  skipWithoutRedis,
  skipWithoutRedisTls,
  startRedis,
  startRedisCluster,
} from '../../helpers/redis.js'
import { until } from '../../helpers/time.js'

const PASSWORD = 'acl-Pa55-word'
/** An ACL user that may do what BullMQ and the service do; the default user switched off. */
async function withAclUser(redis: RedisServer): Promise<void> {
  assert.equal(await redisCommand(redis.port, `ACL SETUSER app on >${PASSWORD} ~* &* +@all`), '+OK')
  assert.equal(await redisCommand(redis.port, 'ACL SETUSER default off'), '+OK')
}

async function runsAJob(child: Child): Promise<string> {
  const url = await listening(child)
  const created = await createJob(url, { algorithm: 'PrimeChecker', params: { number: '97' } })
  assert.equal(created.status, 202, JSON.stringify(created.json))
  const job = await waitForJob(url, created.json.job_id as string)
  assert.equal(job.status, 'completed', JSON.stringify(job))
  return url
}

async function noSecretAnywhere(child: Child, url: string): Promise<void> {
  const metrics = await (await fetch(`${url}/metrics`)).text()
  child.process.kill('SIGTERM')
  await child.exit
  assert.ok(!metrics.includes(PASSWORD), 'the password is not in /metrics')
  assert.ok(!child.output().includes(PASSWORD), `the password is not in the log:\n${child.output()}`)
  assert.equal(child.stderr(), '')
}

const serve = (env: Record<string, string>) =>
  start(
    ['serve', '--port', '0', '--run-jobs', 'true', '--drain-delay-ms', '0', '--shutdown-grace-ms', '500'],
    {
      ALGOSERVE_REDIS_PREFIX: freshPrefix(),
      ...env,
    },
  )

describe('Redis with an ACL user and TLS', { skip: skipWithoutRedis, timeout: 60_000 }, () => {
  test('an ACL user with a password (redis://user:password@): a job runs; the password shows nowhere', async () => {
    const redis = await startRedis()
    after(() => redis.close())
    await withAclUser(redis)
    const child = serve({ ALGOSERVE_REDIS_URL: `redis://app:${PASSWORD}@127.0.0.1:${redis.port}` })
    await noSecretAnywhere(child, await runsAJob(child))
  })

  test('rediss:// with ALGOSERVE_REDIS_TLS_CA_FILE: a job runs; without the CA the certificate is refused, and said', {
    skip: skipWithoutRedisTls(),
  }, async () => {
    const tls = makeTlsFiles()
    after(() => rmSync(tls.dir, { recursive: true, force: true }))
    const tlsPort = await freePort()
    const redis = await startRedis([
      ...['--tls-port', String(tlsPort), '--tls-cert-file', tls.cert, '--tls-key-file', tls.key],
      ...['--tls-ca-cert-file', tls.ca, '--tls-auth-clients', 'no'],
    ])
    after(() => redis.close())
    await withAclUser(redis)
    const url = `rediss://app:${PASSWORD}@127.0.0.1:${tlsPort}`
    const child = serve({ ALGOSERVE_REDIS_URL: url, ALGOSERVE_REDIS_TLS_CA_FILE: tls.ca })
    await noSecretAnywhere(child, await runsAJob(child))

    // The system's CAs do not know this one: no connection, and the log says why.
    const unchecked = serve({ ALGOSERVE_REDIS_URL: url })
    await listening(unchecked)
    const line = await until(
      () =>
        /"code":"(SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)"[^\n]*Redis cannot be reached/.exec(
          unchecked.output(),
        ),
      15_000,
      () => unchecked.output(),
    )
    assert.ok(line)
    const ready = await fetch(`${await listening(unchecked)}/readyz`)
    assert.equal(ready.status, 503)
    await noSecretAnywhere(unchecked, await listening(unchecked))
  })

  test('Sentinel over TLS: the sentinel and the primary it names are both reached with rediss:// and the CA; a job runs', {
    skip: skipWithoutRedisTls(),
  }, async () => {
    const tls = makeTlsFiles()
    after(() => rmSync(tls.dir, { recursive: true, force: true }))
    const tlsFiles = ['--tls-cert-file', tls.cert, '--tls-key-file', tls.key, '--tls-ca-cert-file', tls.ca]
    const primaryTlsPort = await freePort()
    const primary = await startRedis([
      '--tls-port',
      String(primaryTlsPort),
      ...tlsFiles,
      '--tls-auth-clients',
      'no',
    ])
    after(() => primary.close())
    // The sentinel speaks TLS to its clients and to the primary (tls-replication); its plain port is for
    // the test's own questions.
    const sentinelPort = await freePort()
    const sentinelTlsPort = await freePort()
    const dir = mkdtempSync(join(tmpdir(), 'algoserve-sentinel-tls-'))
    after(() => rmSync(dir, { recursive: true, force: true }))
    const name = 'algoserve-tls'
    writeFileSync(
      join(dir, 'sentinel.conf'),
      [
        `port ${sentinelPort}`,
        `tls-port ${sentinelTlsPort}`,
        `tls-cert-file ${tls.cert}`,
        `tls-key-file ${tls.key}`,
        `tls-ca-cert-file ${tls.ca}`,
        'tls-auth-clients no',
        'tls-replication yes',
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${name} 127.0.0.1 ${primaryTlsPort} 1`,
        '',
      ].join('\n'),
    )
    const sentinel = spawn(REDIS_SERVER as string, [join(dir, 'sentinel.conf'), '--sentinel'], {
      stdio: 'ignore',
    })
    after(() => {
      sentinel.kill('SIGKILL')
    })
    await until(
      async () =>
        /flags\nmaster\n/.test(await redisCommand(sentinelPort, `SENTINEL MASTER ${name}`).catch(() => '')),
      15_000,
      'the sentinel sees its primary over TLS',
      50,
    )
    const address = `127.0.0.1:${sentinelTlsPort}`
    const child = serve({
      ALGOSERVE_REDIS_URL: `rediss://${address}`,
      ALGOSERVE_REDIS_SENTINELS: address,
      ALGOSERVE_REDIS_SENTINEL_NAME: name,
      ALGOSERVE_REDIS_TLS_CA_FILE: tls.ca,
    })
    await runsAJob(child)
    assert.notEqual(await redisCommand(primary.port, 'DBSIZE'), '0', 'the job is on the primary')
  })

  test('Cluster over TLS: the nodes, and the nodes the cluster names, are reached with rediss:// and the CA; a job runs', {
    skip: skipWithoutRedisTls(),
  }, async () => {
    const tls = makeTlsFiles()
    after(() => rmSync(tls.dir, { recursive: true, force: true }))
    const cluster = await startRedisCluster({ tls })
    after(() => cluster.close())
    const child = serve(cluster.env(`{${freshPrefix()}}`))
    await runsAJob(child)
  })
})
