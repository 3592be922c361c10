// The command-line client as a person or a script runs it: `algoserve call|jobs ...` in a child process
// (through tsx) against a real service on port 0, on each job backend. Output for people and --json,
// exit codes (usage 2, service 1, connection 3, wait timeout 4), a 600-digit number kept exact, API keys.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parse } from 'lossless-json'
import type { TestApp } from '../helpers/app.js'
import { forEachBackend } from '../helpers/backends.js'
import { cli, type Run } from '../helpers/cli.js'
import { createJob, waitForJob } from '../helpers/jobs.js'
import { BIG_600, PRIME_599, RSA_100 } from '../helpers/numbers.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** A port nothing listens on: taken from the system, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  assert.ok(address !== null && typeof address === 'object')
  return address.port
}

// Everything that reaches a service runs on both job backends.
forEachBackend((backend) => {
  describe('against a service without keys', () => {
    let server: TestApp
    /** RSA-100's job: still running after the wait test, cancelled by the cancel test. */
    let heavyJob = ''
    before(async () => {
      // A long budget keeps RSA-100's job running for as long as the wait tests need.
      server = await backend.start({ jobFactorBudgetMs: 120_000 })
    })
    after(() => server.close())

    test('call 97: readable answer, exit 0', async () => {
      const run = await cli(['call', '97', '--url', server.url])
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stdout, /^number +97 is prime$/m)
      assert.match(run.stdout, /^method +trial_division$/m)
      assert.match(run.stdout, /^elapsed +[0-9.]+ (ms|s)$/m)
      assert.equal(run.stderr, '')
    })

    test('call 91 names its factors; ALGOSERVE_URL is used when --url is not given', async () => {
      const run = await cli(['call', '91'], { ALGOSERVE_URL: server.url })
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stdout, /^number +91 is not prime$/m)
      assert.match(run.stdout, /^factors +7 × 13$/m)
    })

    test('call --json prints the body as the service sent it', async () => {
      const run = await cli(['call', '18446744073709551617', '--json', '--url', server.url])
      assert.equal(run.code, 0, run.stderr)
      assert.ok(run.stdout.endsWith('}\n'))
      assert.match(run.stdout, /"number":18446744073709551617,/)
      assert.match(run.stdout, /"factors":\[274177,67280421310721\]/)
      // One JSON document, exactly: nothing before or after it.
      assert.doesNotThrow(() => JSON.parse(run.stdout))
    })

    test('a 600-digit number goes there and back with every digit, readable and --json', async () => {
      assert.equal(BIG_600.length, 600)
      const readable = await cli(['call', BIG_600, '--url', server.url])
      assert.equal(readable.code, 0, readable.stderr)
      assert.match(readable.stdout, new RegExp(`^number +${BIG_600} is not prime$`, 'm'))
      assert.match(readable.stdout, new RegExp(`^factors +3 × ${PRIME_599}$`, 'm'))

      const json = await cli(['call', BIG_600, '--json', '--url', server.url])
      assert.equal(json.code, 0, json.stderr)
      const body = parse(json.stdout) as { result: { number: unknown; factors: unknown[] } }
      assert.equal(String(body.result.number), BIG_600)
      assert.deepEqual(body.result.factors.map(String), ['3', PRIME_599])

      const created = await cli(['jobs', 'create', BIG_600, '--json', '--url', server.url])
      assert.equal(created.code, 0, created.stderr)
      const id = (JSON.parse(created.stdout) as { job_id: string }).job_id
      await waitForJob(server.url, id)
      const job = await cli(['jobs', 'get', id, '--url', server.url])
      assert.equal(job.code, 0, job.stderr)
      assert.match(job.stdout, new RegExp(`^params\\.number +${BIG_600}$`, 'm'))
      assert.match(job.stdout, new RegExp(`^number +${BIG_600} is not prime$`, 'm'))
      assert.match(job.stdout, new RegExp(`^factors +3 × ${PRIME_599}$`, 'm'))
    })

    test('jobs create, get and wait: readable, and get --json is the service body byte for byte', async () => {
      const created = await cli(['jobs', 'create', '97', '--url', server.url])
      assert.equal(created.code, 0, created.stderr)
      const id = /^job +([0-9a-f]{12})$/m.exec(created.stdout)?.[1]
      assert.ok(id, created.stdout)
      assert.match(created.stdout, /^status +pending$/m)

      const waited = await cli(['jobs', 'wait', id, '--timeout', '20', '--url', server.url])
      assert.equal(waited.code, 0, waited.stderr)
      assert.match(waited.stdout, /^status +completed$/m)
      assert.match(waited.stdout, /^number +97 is prime$/m)

      const json = await cli(['jobs', 'get', id, '--json', '--url', server.url])
      assert.equal(json.code, 0, json.stderr)
      const direct = await (await fetch(`${server.url}/jobs/${id}?include=params`)).text()
      assert.equal(json.stdout, `${direct}\n`)
      assert.match(json.stdout, /"params":\{"number":97\}\}\n$/)

      const readable = await cli(['jobs', 'get', id, '--url', server.url])
      assert.equal(readable.code, 0, readable.stderr)
      assert.match(readable.stdout, /^params\.number +97$/m)
      assert.match(readable.stdout, /^attempt +1$/m)
      assert.match(readable.stdout, /^worker +\S+:[0-9]+$/m)
    })

    test('jobs wait: exit 4 when the timeout passes first, with the state it saw', async () => {
      const { json } = await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: RSA_100 } })
      const started = Date.now()
      const run = await cli(['jobs', 'wait', String(json.job_id), '--timeout', '1.5', '--url', server.url])
      assert.equal(run.code, 4, run.stderr)
      assert.match(run.stdout, /^status +(pending|running)$/m)
      assert.match(run.stderr, /still (pending|running) after 1\.5 s/)
      assert.ok(Date.now() - started >= 1500)
      heavyJob = String(json.job_id)
    })

    // The tests from here to the unknown job use the job-control endpoints (cancel, list, idempotency).
    test('jobs cancel: the running job ends failed as cancelled; a second cancel is exit 1 with 409', async () => {
      assert.ok(heavyJob, 'the job of the wait test')
      const run = await cli(['jobs', 'cancel', heavyJob, '--url', server.url])
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stdout, /^status +failed$/m)
      assert.match(run.stdout, /^error +The job was cancelled\.$/m)
      const again = await cli(['jobs', 'cancel', heavyJob, '--url', server.url])
      assert.equal(again.code, 1)
      assert.match(again.stderr, /^algoserve: 409 JOB_ALREADY_FINISHED: /)
    })

    test('jobs list: a table, the next page by --cursor, --json as sent, and a bad limit is exit 1 with 422', async () => {
      // Three completed jobs of its own, at least, so that two a page make two pages.
      for (const number of [83, 89, 97]) {
        const { json } = await createJob(server.url, { algorithm: 'PrimeChecker', params: { number } })
        await waitForJob(server.url, String(json.job_id))
      }
      const first = await cli(['jobs', 'list', '--status', 'completed', '--limit', '2', '--url', server.url])
      assert.equal(first.code, 0, first.stderr)
      const lines = first.stdout.split('\n')
      assert.match(lines[0] ?? '', /^ID +STATUS +ALGORITHM +CREATED +RESULT$/)
      assert.equal(lines.filter((line) => /^[0-9a-f]{12} +completed /.test(line)).length, 2)
      // The next page's command keeps the filter, the limit and the URL.
      const more =
        /^More: algoserve (jobs list --status completed --limit 2 --url (\S+) --cursor \S+)$/m.exec(
          first.stdout,
        )
      assert.ok(more, first.stdout)
      assert.equal(more[2], server.url)
      const direct = await (await fetch(`${server.url}/jobs?status=completed&limit=2`)).text()
      const json = await cli([
        'jobs',
        'list',
        '--status',
        'completed',
        '--limit',
        '2',
        '--json',
        '--url',
        server.url,
      ])
      assert.equal(json.stdout, `${direct}\n`)

      // Run as printed (its words need no quoting here).
      const next = await cli((more[1] as string).split(' '))
      assert.equal(next.code, 0, next.stderr)
      const ids = (text: string) => [...text.matchAll(/^([0-9a-f]{12}) /gm)].map((m) => m[1])
      assert.ok(ids(next.stdout).length >= 1, next.stdout)
      assert.deepEqual(
        ids(first.stdout).filter((id) => ids(next.stdout).includes(id)),
        [],
        'no job on both pages',
      )

      const cancelled = await cli(['jobs', 'list', '--status', 'failed', '--url', server.url])
      assert.match(cancelled.stdout, new RegExp(`^${heavyJob} +failed `, 'm'))

      const bad = await cli(['jobs', 'list', '--limit', '0', '--url', server.url])
      assert.equal(bad.code, 1)
      assert.match(bad.stderr, /^algoserve: 422 query\.limit: /)
    })

    test('jobs create --idempotency-key: the same job again, said to be replayed; another number is exit 1 with 409', async () => {
      const key = `cli-test-${Date.now()}`
      const first = await cli(['jobs', 'create', '97', '--idempotency-key', key, '--url', server.url])
      assert.equal(first.code, 0, first.stderr)
      const id = /^job +([0-9a-f]{12})$/m.exec(first.stdout)?.[1]
      assert.ok(id)
      assert.doesNotMatch(first.stdout, /^replayed/m)
      const again = await cli(['jobs', 'create', '97', '--idempotency-key', key, '--url', server.url])
      assert.equal(again.code, 0, again.stderr)
      assert.match(again.stdout, new RegExp(`^job +${id}$`, 'm'))
      assert.match(again.stdout, /^replayed +yes/m)
      const other = await cli(['jobs', 'create', '98', '--idempotency-key', key, '--url', server.url])
      assert.equal(other.code, 1)
      assert.match(other.stderr, /^algoserve: 409 IDEMPOTENCY_KEY_REUSED: /)
    })

    test('an unknown job: exit 1, the code and message on stderr; --json puts the error body on stdout', async () => {
      const run = await cli(['jobs', 'get', '0123456789ab', '--url', server.url])
      assert.equal(run.code, 1)
      assert.equal(run.stdout, '')
      assert.match(run.stderr, /^algoserve: 404 JOB_NOT_FOUND: Job '0123456789ab' does not exist/)

      const json = await cli(['jobs', 'get', '0123456789ab', '--json', '--url', server.url])
      assert.equal(json.code, 1)
      assert.equal((JSON.parse(json.stdout) as { detail: { error: string } }).detail.error, 'JOB_NOT_FOUND')
    })

    test('a number over the service limit: exit 1 with its VALIDATION_ERROR and the field at fault', async () => {
      const run = await cli(['call', '9'.repeat(server.config.maxDigits + 1), '--url', server.url])
      assert.equal(run.code, 1)
      assert.match(run.stderr, /^algoserve: 400 VALIDATION_ERROR: .* \(field number\)\n/)
    })
  })

  // A service that opens no event stream (503) is read as one without the events route: with ?wait=.
  test('jobs wait when the service holds no stream (503) nor wait (Wait-Skipped): it reads again at a pace, not in a tight loop', async () => {
    const server = await backend.start({ maxEventStreams: 0, maxJobWaiters: 0, jobFactorBudgetMs: 60_000 })
    const reads = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text()
      const line =
        /^http_requests_total\{method="GET",endpoint="\/jobs\/\{job_id\}",status="200"\} (\d+)$/m.exec(text)
      return Number(line?.[1] ?? 0)
    }
    try {
      const { json } = await createJob(server.url, { algorithm: 'PrimeChecker', params: { number: RSA_100 } })
      const before = await reads()
      const run = await cli(['jobs', 'wait', String(json.job_id), '--timeout', '2', '--url', server.url])
      assert.equal(run.code, 4, run.stderr)
      // One read every 0.5 s or so over 2 s; a loop without the pause makes hundreds.
      const made = (await reads()) - before
      assert.ok(made >= 3 && made <= 8, `${made} reads in 2 s`)
    } finally {
      await server.close()
    }
  })

  describe('against a service with API keys', () => {
    const KEY = 'cli-test-key-4c1d'
    let server: TestApp
    before(async () => {
      server = await backend.start({ apiKeys: [createHash('sha256').update(KEY).digest('hex')] })
    })
    after(() => server.close())

    test('the right key, by flag or by ALGOSERVE_API_KEY: exit 0', async () => {
      const byFlag = await cli(['call', '97', '--api-key', KEY, '--url', server.url])
      assert.equal(byFlag.code, 0, byFlag.stderr)
      const byEnv = await cli(['jobs', 'create', '97', '--url', server.url], { ALGOSERVE_API_KEY: KEY })
      assert.equal(byEnv.code, 0, byEnv.stderr)
    })

    test('a wrong key or none: exit 1 with UNAUTHORIZED', async () => {
      const wrong = await cli(['call', '97', '--api-key', 'not-the-key', '--url', server.url])
      assert.equal(wrong.code, 1)
      assert.match(wrong.stderr, /^algoserve: 401 UNAUTHORIZED: The API key is not accepted\./)
      const none = await cli(['jobs', 'get', '0123456789ab', '--url', server.url])
      assert.equal(none.code, 1)
      assert.match(none.stderr, /^algoserve: 401 UNAUTHORIZED: An API key is required/)
    })
  })
})

test('usage errors exit 2 and name the problem', async () => {
  const cases: [string[], RegExp][] = [
    [['call'], /call: missing <algorithm> \(or a number for PrimeChecker\)/],
    [['call', '1.5'], /'1\.5' is not an integer/],
    [['call', '97', '--colour', 'red'], /unknown option --colour/],
    [['jobs', 'get'], /get: missing <id>/],
    [['jobs', 'frobnicate'], /unknown jobs command 'frobnicate'/],
    [['jobs', 'wait', 'abc', '--timeout', 'soon'], /--timeout 'soon' is not a number of seconds/],
    [['jobs', 'wait', 'abc', '--progress', 'dots'], /--progress 'dots' is not one of auto, bar, lines, none/],
    [['jobs', 'get', 'abc', '--progress', 'bar'], /get takes no --progress/],
    [['jobs', 'get', 'abc', '--webhook', 'http://x'], /get takes no --webhook/],
    [['call', '97', '--url', 'ftp://example.com'], /not an http:\/\/ or https:\/\/ URL/],
    [['jobs', 'create', '97', '--idempotency-key', 'clé'], /--idempotency-key may hold printable ASCII/],
    [['call', '97', '--api-key', 'key\twith-tab'], /--api-key may hold printable ASCII/],
  ]
  for (const [args, message] of cases) {
    const run = await cli(args)
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
    // One line that names the problem, and a hint; not the whole help.
    const [problem, hint, ...rest] = run.stderr.split('\n')
    assert.match(problem ?? '', /^algoserve: /)
    assert.match(problem ?? '', message)
    assert.equal(hint, "Run 'algoserve --help' for the commands and their options.")
    assert.deepEqual(rest, [''])
    assert.equal(run.stdout, '')
  }
})

test('--help documents every client command and the exit codes', async () => {
  const run = await cli(['--help'])
  assert.equal(run.code, 0)
  for (const line of [
    'algoserve algorithms [<algorithm>]',
    'algoserve call <algorithm> [--params JSON] [key=value ...]',
    'algoserve call <number>',
    'algoserve jobs create <algorithm>',
    'algoserve jobs list',
    'algoserve jobs wait <id>',
  ]) {
    assert.ok(run.stdout.includes(line), line)
  }
  assert.match(run.stdout, /^ +2 +usage error/m)
  assert.match(run.stdout, /^ +3 +connection failure/m)
  const jobs = await cli(['jobs', '--help'])
  assert.equal(jobs.code, 0)
  assert.match(jobs.stdout, /Exit codes:/)
})

test('no service at the URL: exit 3, saying so', async () => {
  const port = await closedPort()
  const run = await cli(['call', '97', '--url', `http://127.0.0.1:${port}`])
  assert.equal(run.code, 3)
  assert.match(
    run.stderr,
    new RegExp(`^algoserve: cannot reach http://127\\.0\\.0\\.1:${port}: ECONNREFUSED`),
  )
})

// `npx algoserve` in a checkout installs the checkout into npm's npx cache (a link), which runs its
// `prepare`: the whole build (AssemblyScript and tsc, 15 s or more) on the first call, for a build
// `npm install` has made already. `prepare` skips it under `npm exec` when dist/ is there.
test('the first `npx algoserve --help` in a checkout does not build it again', {
  skip: !existsSync(join(ROOT, 'dist/main.js')) && 'no dist/main.js: run `npm run build` first',
}, async () => {
  const built = statSync(join(ROOT, 'dist/main.js')).mtimeMs
  // A cache of its own: no earlier npx call has installed the checkout there.
  const cache = mkdtempSync(join(tmpdir(), 'algoserve-npx-cache-'))
  try {
    const run = await new Promise<Run>((resolve) => {
      execFile(
        'npx',
        ['--yes', 'algoserve', '--help'],
        { cwd: ROOT, env: { ...process.env, npm_config_cache: cache }, timeout: 120_000 },
        (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : ((error.code as number) ?? null), stdout, stderr }),
      )
    })
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /^Usage: algoserve serve\|worker/)
    assert.equal(statSync(join(ROOT, 'dist/main.js')).mtimeMs, built, 'dist/ was built again')
  } finally {
    rmSync(cache, { recursive: true, force: true })
  }
})
