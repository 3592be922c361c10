// compose.yaml and the Kubernetes manifests say what docs/operating.md says of them. Neither Docker nor a
// cluster runs here: these check the files' content; the commands they run are the ones the
// Dockerfile test runs.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parse, parseAllDocuments } from 'yaml'
import { threadsFor } from '../../src/execution/usable-cpus.js'
import { tracingWanted } from '../../src/tracing/wanted.js'
import { composeEnvironment } from '../helpers/compose.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')

type Probe = { httpGet: { path: string; port: string } }
type Container = {
  args: string[]
  ports: { name: string; containerPort: number }[]
  env: {
    name: string
    value?: string
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } }
  }[]
  livenessProbe: Probe
  readinessProbe: Probe
  lifecycle?: unknown
  resources: { requests: Record<string, string>; limits: Record<string, string> }
}
type Manifest = {
  kind: string
  metadata: { name: string }
  spec: {
    selector: { matchLabels: Record<string, string> }
    template: {
      metadata: { labels: Record<string, string> }
      spec: { terminationGracePeriodSeconds: number; containers: Container[] }
    }
  }
}

const manifests = (path: string) => parseAllDocuments(read(path)).map((d) => d.toJS() as Manifest)

// The API drains (it is behind a Service); a worker gets no traffic and needs no drain.
// A worker keeps V8's default young generation (docs/operating.md#memory).
for (const [path, args, port, drains] of [
  ['deploy/kubernetes/api.yaml', ['node', '--max-semi-space-size=1', 'dist/main.js', 'serve'], 8000, true],
  ['deploy/kubernetes/worker.yaml', ['node', 'dist/main.js', 'worker'], 8001, false],
] as const) {
  test(`${path}: probes on our endpoints, drain delay, resources and a PodDisruptionBudget`, () => {
    const all = manifests(path)
    const deployment = all.find((m) => m.kind === 'Deployment')
    assert.ok(deployment)
    const pod = deployment.spec.template.spec
    const [container] = pod.containers
    assert.ok(container)
    assert.deepEqual(container.args, args)
    assert.deepEqual(container.ports, [{ name: 'http', containerPort: port }])
    assert.deepEqual(container.livenessProbe.httpGet, { path: '/healthz', port: 'http' })
    assert.deepEqual(container.readinessProbe.httpGet, { path: '/readyz', port: 'http' })
    assert.ok(container.env.some((e) => e.name === 'ALGOSERVE_HOST' && e.value === '0.0.0.0'))
    assert.ok(
      container.resources.requests.cpu &&
        container.resources.requests.memory &&
        container.resources.limits.memory,
    )
    // The pod may take the drain delay plus the shutdown grace before it is killed; the drain is the
    // service's own (a preStop sleep would add to it).
    const setting = (name: string) => Number(container.env.find((e) => e.name === name)?.value) / 1000
    const grace = setting('ALGOSERVE_SHUTDOWN_GRACE_MS')
    const drain = setting('ALGOSERVE_DRAIN_DELAY_MS')
    assert.equal(container.lifecycle, undefined)
    // At least the readiness probe's period x failure threshold, so the pod has left the endpoints.
    if (drains) assert.ok(drain >= 10, `drain delay ${drain} s`)
    else assert.equal(drain, 0)
    assert.ok(
      pod.terminationGracePeriodSeconds > drain + grace,
      `${pod.terminationGracePeriodSeconds} > ${drain} + ${grace}`,
    )
    const budget = all.find((m) => m.kind === 'PodDisruptionBudget')
    assert.ok(budget)
    assert.deepEqual(budget.spec.selector.matchLabels, deployment.spec.selector.matchLabels)
    assert.deepEqual(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels)
  })
}

// The worker threads follow the CPU limit, the container's cgroup quota (test/execution/usable-cpus.test.ts
// reads one): the request is the limit, in whole CPUs, so the threads are what the pod was given.
for (const [path, threads] of [
  ['deploy/kubernetes/api.yaml', 1],
  ['deploy/kubernetes/worker.yaml', 2],
] as const) {
  test(`${path}: CPU requested as limited, the threads it gives, and a memory limit above the request`, () => {
    const deployment = manifests(path).find((m) => m.kind === 'Deployment')
    const container = deployment?.spec.template.spec.containers[0]
    assert.ok(container)
    const { requests, limits } = container.resources
    assert.ok(limits.cpu, 'a CPU limit: without one the threads follow the node')
    assert.equal(requests.cpu, limits.cpu)
    assert.match(limits.cpu, /^[0-9]+$/, 'whole CPUs')
    assert.equal(threadsFor(Number(limits.cpu)), threads)
    assert.ok(
      !container.env.some((e) => e.name === 'ALGOSERVE_WORKER_THREADS'),
      'the threads follow the limit',
    )
    const mebibytes = (quantity = '') => Number(/^([0-9]+)Mi$/.exec(quantity)?.[1])
    assert.ok(mebibytes(limits.memory) > mebibytes(requests.memory), `${limits.memory} > ${requests.memory}`)
  })
}

test('the Secret keys the manifests name are the ones their containers read', () => {
  const secretKeys = (path: string) => {
    const container = manifests(path).find((m) => m.kind === 'Deployment')?.spec.template.spec.containers[0]
    return Object.fromEntries(
      (container?.env ?? []).flatMap((e) => {
        const ref = e.valueFrom?.secretKeyRef
        return ref === undefined ? [] : [[ref.key, [e.name, ref.name, ref.optional ?? false]]]
      }),
    )
  }
  const api = secretKeys('deploy/kubernetes/api.yaml')
  assert.deepEqual(api, {
    'redis-url': ['ALGOSERVE_REDIS_URL', 'algoserve', false],
    'webhook-secret': ['ALGOSERVE_WEBHOOK_SECRET', 'algoserve', true],
    'api-keys': ['ALGOSERVE_API_KEYS', 'algoserve', true],
  })
  // The command that api.yaml gives to create the Secret has each key it reads, and no other.
  const created = [...read('deploy/kubernetes/api.yaml').matchAll(/--from-literal=([a-z-]+)=/g)].map(
    (m) => m[1],
  )
  assert.deepEqual(created.sort(), Object.keys(api).sort())
  // Workers send the webhooks: they sign them with the same secret.
  assert.deepEqual(secretKeys('deploy/kubernetes/worker.yaml'), {
    'redis-url': ['ALGOSERVE_REDIS_URL', 'algoserve', false],
    'webhook-secret': ['ALGOSERVE_WEBHOOK_SECRET', 'algoserve', true],
  })
})

test('compose.yaml: Redis with AOF and noeviction, the API, a worker, Prometheus and Grafana provisioned', () => {
  const compose = parse(read('compose.yaml')) as {
    services: Record<
      string,
      { command?: string[]; environment?: Record<string, string>; volumes?: string[]; healthcheck?: unknown }
    >
  }
  assert.deepEqual(Object.keys(compose.services).sort(), [
    'api',
    'grafana',
    'jaeger',
    'prometheus',
    'redis',
    'worker',
  ])
  const redis = compose.services.redis?.command?.join(' ') ?? ''
  assert.match(redis, /--appendonly yes/)
  assert.match(redis, /--maxmemory-policy noeviction/)
  assert.equal(compose.services.api?.environment?.ALGOSERVE_HOST, '0.0.0.0')
  assert.equal(compose.services.api?.environment?.ALGOSERVE_REDIS_URL, 'redis://redis:6379')
  assert.deepEqual(compose.services.worker?.command, ['node', 'dist/main.js', 'worker'])
  // The image's HEALTHCHECK serves the API and the worker alike (test/deploy/dockerfile.test.ts).
  assert.equal(compose.services.api?.healthcheck, undefined)
  assert.equal(compose.services.worker?.healthcheck, undefined)
  assert.ok(compose.services.prometheus?.volumes?.includes('./deploy/prometheus:/etc/prometheus:ro'))
  assert.ok(
    compose.services.grafana?.volumes?.includes('./deploy/grafana/provisioning:/etc/grafana/provisioning:ro'),
  )
  assert.ok(
    compose.services.grafana?.volumes?.includes('./deploy/grafana/dashboards:/var/lib/grafana/dashboards:ro'),
  )
})

test('compose.yaml: Jaeger only in the tracing profile; the API and the worker trace only when asked', () => {
  const compose = parse(read('compose.yaml')) as {
    services: Record<string, { profiles?: string[]; environment?: Record<string, string>; ports?: string[] }>
  }
  const jaeger = compose.services.jaeger
  assert.deepEqual(jaeger?.profiles, ['tracing'])
  assert.ok(jaeger?.ports?.includes('16686:16686'))
  for (const name of ['api', 'worker']) {
    const environment = compose.services[name]?.environment ?? {}
    assert.equal(environment.OTEL_SERVICE_NAME, `algoserve-${name}`)
    // As `docker compose up` gives it: off unless the variable is set where compose runs.
    assert.equal(tracingWanted(composeEnvironment(environment)), false, name)
    assert.equal(
      tracingWanted(composeEnvironment(environment, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' })),
      true,
      name,
    )
  }
  assert.match(read('docs/tracing.md'), /docker compose --profile tracing up/)
})
