// BENCHMARKS.md against its data: the page is what bench/lib/write-benchmarks-md.mjs writes from
// bench/results/, so an edit of one without the other fails here; each results file says how its figures
// were made; and the script's --check refuses a page that differs from its results.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { RESULTS, readResults } from '../../bench/lib/results.js'
import { render } from '../../bench/lib/write-benchmarks-md.mjs'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SCRIPT = join(ROOT, 'bench/lib/write-benchmarks-md.mjs')

test('BENCHMARKS.md is what the generator writes from bench/results/', () => {
  const committed = readFileSync(join(ROOT, 'BENCHMARKS.md'), 'utf8')
  assert.equal(committed, render(readResults()), 'run npm run bench:docs and commit BENCHMARKS.md')
})

test('every results file names its script, command, date, machine and where its history is', () => {
  const results = readResults()
  assert.ok(results.length >= 20, `results files: ${results.length}`)
  for (const result of results) {
    for (const field of ['name', 'title', 'script', 'command', 'date', 'machine', 'history', 'source']) {
      assert.equal(typeof result[field], 'string', `${String(result.name)}: ${field}`)
    }
    assert.ok(readFileSync(join(ROOT, String(result.script))), `${String(result.name)}: its script`)
    assert.ok(readFileSync(join(ROOT, String(result.history))), `${String(result.name)}: its history page`)
    if (result.source === 'script') assert.match(String(result.node), /^v\d+\./, String(result.name))
    else {
      assert.equal(result.source, 'recorded', String(result.name))
      assert.match(String(result.recorded), /recorded by hand/, String(result.name))
    }
  }
})

test('the page carries each results file: its command and every cell of its tables', () => {
  const page = readFileSync(join(ROOT, 'BENCHMARKS.md'), 'utf8')
  for (const result of readResults()) {
    assert.ok(page.includes(`\`${String(result.command)}\``), `${String(result.name)}: command`)
    const tables = result.tables as { rows: unknown[][] }[]
    for (const cell of tables.flatMap((table) => table.rows.flat())) {
      assert.ok(page.includes(String(cell).replaceAll('|', '\\|')), `${String(result.name)}: ${String(cell)}`)
    }
  }
})

test('--check exits 1 when a figure in the results differs from the page, 0 when they agree', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'algoserve-results-'))
  try {
    const copy = join(scratch, 'results')
    cpSync(RESULTS, copy, { recursive: true })
    const check = () =>
      spawnSync(process.execPath, [SCRIPT, '--check', '--results', copy], { encoding: 'utf8' })
    const same = check()
    assert.equal(same.status, 0, same.stderr)
    const name = readResults(copy).find((result) => (result.tables as unknown[]).length > 0)?.name
    const file = join(copy, `${String(name)}.json`)
    const result = JSON.parse(readFileSync(file, 'utf8'))
    result.tables[0].rows[0][1] = `${result.tables[0].rows[0][1]}0`
    writeFileSync(file, JSON.stringify(result))
    const changed = check()
    assert.equal(changed.status, 1)
    assert.match(changed.stderr, /differs from what .* gives: run npm run bench:docs/)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
})
