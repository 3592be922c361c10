// A script's printed report as its results file: bench/lib/markdown-results.mjs turns the Markdown the
// benchmarks print into tables and notes, and a shell script run through bench/lib/common.sh writes its
// results file when it ends well, and not when it fails.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { fromMarkdown } from '../../bench/lib/markdown-results.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

test('a heading or a line right above a table is its caption; other text is notes', () => {
  const report = [
    'seed 1, 3 rounds',
    '| case | req/s |',
    '|---|---|',
    '| small \\| prime | 100 |',
    '',
    '## Start-up',
    '',
    '| modules | ms |',
    '|---|---|',
    '| 50 | 300 |',
    '',
    '## Redis mode',
    'round 1: 10 jobs/s',
    'round 2: 12 jobs/s',
    '',
    'module / invoke: 0.90',
    '## lone heading',
  ].join('\n')
  assert.deepEqual(fromMarkdown(report), {
    tables: [
      { caption: 'seed 1, 3 rounds', columns: ['case', 'req/s'], rows: [['small | prime', '100']] },
      { caption: 'Start-up:', columns: ['modules', 'ms'], rows: [['50', '300']] },
    ],
    notes: [
      'Redis mode:\n\n- round 1: 10 jobs/s\n- round 2: 12 jobs/s',
      'module / invoke: 0.90',
      'lone heading:',
    ],
  })
})

test('lines printed as JSON objects are the rows of a table, a column per key', () => {
  const report = [
    'ROUNDS=1',
    '{"topology":"standalone","jobs/s":90}',
    '{"topology":"cluster","jobs/s":80,"lost":[1]}',
  ]
  assert.deepEqual(fromMarkdown(report.join('\n')).tables, [
    {
      caption: 'ROUNDS=1',
      columns: ['topology', 'jobs/s', 'lost'],
      rows: [
        ['standalone', 90, ''],
        ['cluster', 80, '[1]'],
      ],
    },
  ])
})

test("console.table's box is a table, its (index) column left out when it only counts rows", () => {
  const rows = [
    { topology: 'standalone', 'jobs/s': 90 },
    { topology: 'cluster', 'jobs/s': 80 },
  ]
  const lines: string[] = []
  const log = console.log
  console.log = (line: string) => lines.push(line)
  try {
    console.table(rows)
    console.table({ total: { lost: 0 } })
  } finally {
    console.log = log
  }
  assert.deepEqual(fromMarkdown(lines.join('\n\n')).tables, [
    {
      columns: ['topology', 'jobs/s'],
      rows: [
        ['standalone', '90'],
        ['cluster', '80'],
      ],
    },
    { columns: ['', 'lost'], rows: [['total', '0']] },
  ])
})

/**
 * Runs a shell script that sources common.sh and ends with `status`, or is sent SIGTERM once it has printed
 * its table; returns the results file, if any.
 */
async function runScript(status: number | 'SIGTERM') {
  const folder = mkdtempSync(join(tmpdir(), 'markdown-results-'))
  try {
    const script = join(folder, 'bench/demo.sh')
    mkdirSync(join(folder, 'bench'))
    writeFileSync(
      script,
      [
        'set -euo pipefail',
        `. ${join(ROOT, 'bench/lib/common.sh')}`,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a line of shell, not a template
        'ROUNDS=${ROUNDS:-3}',
        'results_on_exit demo "a demo" docs/benchmarks/invoke.md "" ROUNDS UNSET',
        'echo "## Demo, $ROUNDS rounds"',
        'echo "| a | b |"; echo "|---|---|"; echo "| 1 | 2 |"',
        // A bare wait, as some scripts end their rounds: it must not wait for what shows the report.
        'sleep 0.1 & wait',
        status === 'SIGTERM' ? 'sleep 30' : `exit ${status}`,
      ].join('\n'),
    )
    const run = spawn('bash', [script, 'x|y'], {
      cwd: ROOT,
      env: { ...process.env, RESULTS_DIR: join(folder, 'results'), ROUNDS: '2' },
    })
    let output = ''
    run.stdout.on('data', (chunk) => {
      output += chunk
      if (status === 'SIGTERM' && output.includes('| 1 | 2 |')) run.kill('SIGTERM')
    })
    const [code] = await once(run, 'close')
    assert.equal(code, status === 'SIGTERM' ? 143 : status)
    const file = join(folder, 'results/demo.json')
    return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

test('a shell script that ends well writes its results file from what it printed', {
  timeout: 30_000,
}, async () => {
  const result = await runScript(0)
  assert.equal(result.command, "ROUNDS=2 bash bench/demo.sh 'x|y'")
  assert.equal(result.source, 'script')
  assert.deepEqual(result.tables, [{ caption: 'Demo, 2 rounds:', columns: ['a', 'b'], rows: [['1', '2']] }])
})

test('a shell script that fails, or is stopped, leaves the last results file', {
  timeout: 30_000,
}, async () => {
  assert.equal(await runScript(1), undefined)
  assert.equal(await runScript('SIGTERM'), undefined)
})
