// The deployment files parse, Prometheus accepts its config and rules (promtool), and every metric the
// dashboard and the alert rules name is exported by a live /metrics.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parse, parseAllDocuments, stringify } from 'yaml'
import { startApp, type TestApp } from '../helpers/app.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const file = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const run = promisify(execFile)
const hasPromtool = existsSync('/usr/bin/promtool')
const NO_PROMTOOL = 'SKIPPED: no promtool (apt-get install prometheus)'

const YAML_FILES = [
  'compose.yaml',
  'deploy/prometheus/prometheus.yml',
  'deploy/prometheus/alerts.yml',
  'deploy/grafana/provisioning/datasources/prometheus.yaml',
  'deploy/grafana/provisioning/dashboards/algoserve.yaml',
  'deploy/kubernetes/api.yaml',
  'deploy/kubernetes/worker.yaml',
]

type Dashboard = { panels: { title: string; targets: { expr: string }[] }[] }
const dashboard = () => JSON.parse(file('deploy/grafana/dashboards/algoserve.json')) as Dashboard
type Rules = { groups: { rules: { alert: string; expr: string }[] }[] }
const rules = () => parse(file('deploy/prometheus/alerts.yml')) as Rules

// What a PromQL expression names that is not a metric: functions, keywords, aggregations.
const NOT_METRICS = new Set(
  'sum rate irate increase deriv histogram_quantile by without on ignoring and or unless avg min max count clamp_min label_values bool group_left group_right'.split(
    ' ',
  ),
)

/** The metric names in a PromQL expression (histogram series by their base name). */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\b(?:by|without|on|ignoring)\s*\([^)]*\)/g, '') // grouping labels
    .replace(/\[[^\]]*\]/g, '') // ranges and subqueries
    .replace(/\$\w+/g, '') // Grafana variables
  const names = [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0])
  return names
    .filter((name) => !NOT_METRICS.has(name) && !/^(?:e|Inf|NaN)$/.test(name))
    .map((name) => name.replace(/_(?:bucket|sum|count)$/, ''))
}

test('every YAML file parses, and the dashboard is JSON', () => {
  for (const path of YAML_FILES) {
    for (const document of parseAllDocuments(file(path))) {
      assert.deepEqual(document.errors, [], path)
      assert.ok(document.toJS(), path)
    }
  }
  assert.ok(dashboard().panels.length >= 10)
})

test('the dashboard shows what operators need', () => {
  const titles = dashboard().panels.map((panel) => panel.title)
  for (const wanted of [
    'Request rate by endpoint',
    'Errors by status',
    'Latency quantiles by endpoint',
    'Jobs waiting and running',
    'Job duration',
    'Webhook outcomes',
    'Process memory',
  ]) {
    assert.ok(titles.includes(wanted), wanted)
  }
})

test('the alert rules cover errors, latency, backlog, webhooks and readiness', () => {
  const alerts = rules().groups.flatMap((group) => group.rules.map((rule) => rule.alert))
  assert.deepEqual(alerts, [
    'AlgoserveHighErrorRate',
    'AlgoserveHighLatency',
    'AlgoserveJobBacklogGrowing',
    'AlgoserveWebhookFailures',
    'AlgoserveNotReady',
    'AlgoserveDown',
  ])
})

test('metricNames reads PromQL', () => {
  assert.deepEqual(
    metricNames(
      'histogram_quantile(0.99, sum by (le, endpoint) (rate(http_request_duration_seconds_bucket{job=~"$job", status="5.."}[5m]))) > 2.5',
    ),
    ['http_request_duration_seconds'],
  )
  assert.deepEqual(metricNames('sum(x_total) / clamp_min(sum(y), 1e-9) and deriv(sum(z)[15m:1m]) > 0'), [
    'x_total',
    'y',
    'z',
  ])
})

describe('promtool', { skip: !hasPromtool && NO_PROMTOOL }, () => {
  test('promtool check config passes (and loads the rules)', async () => {
    const { stdout } = await run('promtool', [
      'check',
      'config',
      join(ROOT, 'deploy/prometheus/prometheus.yml'),
    ])
    assert.match(stdout, /SUCCESS: 1 rule files found/)
    assert.match(stdout, /SUCCESS: 6 rules found/)
  })

  test('promtool check rules passes', async () => {
    const { stdout } = await run('promtool', ['check', 'rules', join(ROOT, 'deploy/prometheus/alerts.yml')])
    assert.match(stdout, /SUCCESS: 6 rules found/)
  })

  test('promtool test rules: the alerts fire when they should and not otherwise', async () => {
    const { stdout } = await run('promtool', [
      'test',
      'rules',
      join(ROOT, 'deploy/prometheus/alerts.test.yml'),
    ])
    assert.match(stdout, /SUCCESS/)
  })

  test('every alert rule is tested on the series of more than one process', () => {
    type Case = { input_series: { series: string }[]; alert_rule_test: { alertname: string }[] }
    const { tests } = parse(file('deploy/prometheus/alerts.test.yml')) as { tests: Case[] }
    const alerts = rules().groups.flatMap((group) => group.rules.map((rule) => rule.alert))
    for (const alert of alerts) {
      const cases = tests.filter((c) => c.alert_rule_test.some((t) => t.alertname === alert))
      assert.ok(cases.length > 0, `${alert} is tested`)
      for (const c of cases) {
        const instances = new Set(c.input_series.map((s) => /instance="([^"]+)"/.exec(s.series)?.[1]))
        assert.ok(!instances.has(undefined) && instances.size >= 2, `${alert}: ${[...instances].join(' ')}`)
      }
    }
  })

  // jobs_waiting and jobs_running are read from the job store: every process reports the same
  // counts of each algorithm. A panel that adds them up over the processes shows the backlog once per
  // process; each algorithm is shown on its own.
  test("the dashboard's job gauges show the store's counts once, however many processes report them", async () => {
    const targets = dashboard().panels.flatMap((panel) =>
      panel.targets
        .filter((t) => metricNames(t.expr).some((name) => name === 'jobs_waiting' || name === 'jobs_running'))
        .map((t) => ({ panel: panel.title, expr: t.expr.replaceAll('$job', '.*') })),
    )
    assert.equal(targets.length, 2, JSON.stringify(targets))
    const processes = ['algoserve-api", instance="api-1:8000', 'algoserve-api", instance="api-2:8000']
    processes.push('algoserve-worker", instance="worker-1:8001', 'algoserve-worker", instance="worker-2:8001')
    const series = processes.flatMap((labels) => [
      { series: `jobs_waiting{job="${labels}", algorithm="PrimeChecker"}`, values: '3x10' },
      { series: `jobs_running{job="${labels}", algorithm="PrimeChecker"}`, values: '2x10' },
      { series: `jobs_waiting{job="${labels}", algorithm="Sorter"}`, values: '5x10' },
      { series: `jobs_running{job="${labels}", algorithm="Sorter"}`, values: '1x10' },
    ])
    const dir = mkdtempSync(join(tmpdir(), 'algoserve-promql-'))
    try {
      const path = join(dir, 'dashboard.test.yml')
      writeFileSync(
        path,
        stringify({
          tests: [
            {
              interval: '1m',
              input_series: series,
              promql_expr_test: targets.map(({ expr }) => ({
                expr,
                eval_time: '5m',
                exp_samples: [
                  { labels: '{algorithm="PrimeChecker"}', value: /jobs_waiting/.test(expr) ? 3 : 2 },
                  { labels: '{algorithm="Sorter"}', value: /jobs_waiting/.test(expr) ? 5 : 1 },
                ],
              })),
            },
          ],
        }),
      )
      const outcome = await run('promtool', ['test', 'rules', path]).catch(
        (error: { stdout: string }) => error,
      )
      assert.match(outcome.stdout, /SUCCESS/, outcome.stdout)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('every metric in the dashboard and the rules exists in a live /metrics', () => {
  let server: TestApp
  let exported: Set<string>
  before(async () => {
    server = await startApp()
    const text = await (await fetch(`${server.url}/metrics`)).text()
    exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] as string))
  })
  after(() => server.close())

  const named = () => {
    const fromDashboard = dashboard().panels.flatMap((panel) =>
      panel.targets.flatMap((t) => metricNames(t.expr)),
    )
    const fromRules = rules().groups.flatMap((group) => group.rules.flatMap((rule) => metricNames(rule.expr)))
    // `up` is Prometheus's own, about the scrape.
    return new Set([...fromDashboard, ...fromRules].filter((name) => name !== 'up'))
  }

  test('all of them', () => {
    const missing = [...named()].filter((name) => !exported.has(name)).sort()
    assert.deepEqual(missing, [])
    assert.ok(named().size >= 12, [...named()].join(' '))
  })
})
