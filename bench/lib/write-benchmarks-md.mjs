#!/usr/bin/env node
// Writes BENCHMARKS.md from bench/results/*.json: one section per results file, the last run of its script,
// grouped by the page of docs/benchmarks/ that keeps that script's history, in the order of file names.
// `npm run bench:docs` writes it; `--check` only compares, and exits 1 when the file differs from what the
// results give (the test of this script does the same, so the page cannot drift from its data).
// Usage: node bench/lib/write-benchmarks-md.mjs [--check] [--results DIR] [--out FILE]
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { RESULTS, readResults } from './results.mjs'

const ROOT = join(import.meta.dirname, '../..')

const HEADER = `# Benchmarks

<!-- Written by npm run bench:docs (bench/lib/write-benchmarks-md.mjs) from bench/results/: change those files
     or run the script again, not this page. -->

The last run of each benchmark script: its command, when and where it ran, and its figures. Each script
compares the service with a baseline in the same run (a bare server, raw BullMQ, PARI/GP, another revision),
on a shared 2-core machine unless the run says otherwise, so read a figure against its own run's baseline.
Most scripts need \`wrk\`; the PrimeChecker ones compare with PARI/GP when \`gp\` is there. Every script
writes its results file at the end of a run that succeeds (\`RESULTS_DIR=\` elsewhere for a trial run); a
file that no such run has replaced yet holds the figures recorded by hand from the last run, and says so. The product's targets, and every
dated run with its context, are in [docs/benchmarks/](docs/benchmarks/README.md).
`

/** A table cell: its text, with the pipes that would end the cell escaped. */
const cell = (value) => String(value ?? '').replaceAll('|', '\\|')

function table({ caption, columns, rows }) {
  const lines = [`| ${columns.map(cell).join(' | ')} |`, `|${columns.map(() => '---|').join('')}`]
  for (const row of rows) lines.push(`| ${row.map(cell).join(' | ')} |`)
  return caption === undefined ? lines.join('\n') : `${caption}\n\n${lines.join('\n')}`
}

/** The line that says how the figures were made: the command, and when, where and from what they came. */
function provenance(result) {
  const where = [
    result.date,
    result.commit && `commit ${result.commit}`,
    result.node && `Node ${result.node}`,
  ]
  const ran = `\`${result.command}\`, ${where.filter(Boolean).join(', ')}; ${result.machine}.`
  if (result.source === 'script') return `Last run: ${ran}`
  return `Last recorded run: ${ran} ${result.recorded}`
}

function section(result) {
  const name = result.npm === undefined ? `\`${result.script}\`` : `\`${result.npm}\` (\`${result.script}\`)`
  const parts = [`### ${name}: ${result.title}`, provenance(result)]
  for (const figures of result.tables) parts.push(table(figures))
  parts.push(...result.notes)
  return parts.join('\n\n')
}

/** The title of a page of docs/benchmarks/: its first heading. */
function pageTitle(page) {
  const text = readFileSync(join(ROOT, page), 'utf8')
  return /^# (.+)$/m.exec(text)?.[1] ?? page
}

/** BENCHMARKS.md's text from the results. */
export function render(results) {
  const pages = [...new Set(results.map((result) => result.history))].sort()
  const groups = pages.map((page) => {
    const link = `[${page}](${page})`
    const sections = results.filter((result) => result.history === page).map(section)
    return [`## ${pageTitle(page)}`, `Every run, and how to read it: ${link}.`, ...sections].join('\n\n')
  })
  return `${[HEADER.trimEnd(), ...groups].join('\n\n')}\n`
}

if (process.argv[1] === import.meta.filename) {
  const { values } = parseArgs({
    options: {
      check: { type: 'boolean', default: false },
      results: { type: 'string', default: RESULTS },
      out: { type: 'string', default: join(ROOT, 'BENCHMARKS.md') },
    },
  })
  const text = render(readResults(values.results))
  if (!values.check) writeFileSync(values.out, text)
  else if (readFileSync(values.out, 'utf8') !== text) {
    console.error(`${values.out} differs from what ${values.results} gives: run npm run bench:docs`)
    process.exitCode = 1
  }
}
