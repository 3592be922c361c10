// A script's printed report as a results file: most benchmarks print Markdown (a `## ` heading, then a table
// or lines of text), and this turns that text into the tables and notes writeResult takes, so that each
// script keeps printing what it prints and only names its run. A heading followed by a table is its caption;
// lines that are each a JSON object make a table too, as does console.table's box; any other paragraph is a
// note, its lines as a list when it has several.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { commandLine, writeResult } from './results.mjs'

/** The cells of a table line `| a | b |`; a pipe escaped as `\|` stays in its cell. */
function cells(line) {
  const inner = line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '')
  return inner.split(/(?<!\\)\|/).map((value) => value.trim().replaceAll('\\|', '|'))
}

const isTable = (line) => line.trimStart().startsWith('|')
/** A `## heading` as a caption: its text, and a colon. */
const headingText = (line) => `${line.replace(/^#+\s*/, '')}:`
const isRule = (line) => /^\|(\s*:?-+:?\s*\|)+\s*$/.test(line.trim())

/** A line printed as one JSON object (some scripts print a row so), or undefined. */
function jsonRow(line) {
  if (!line.startsWith('{')) return undefined
  try {
    const value = JSON.parse(line)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined
  } catch {
    return undefined
  }
}

/** What a line is: a line of a Markdown table, of console.table's box, a JSON object (a row), or text. */
function kind(line) {
  if (isTable(line)) return 'table'
  if (/^[┌│├└]/.test(line)) return 'box'
  return jsonRow(line) === undefined ? 'text' : 'json'
}

/** The table console.table drew: its (index) column kept only when it holds names rather than 0, 1, 2... */
function boxTable(lines) {
  const unquote = (cell) => cell.trim().replace(/^'(.*)'$/, '$1')
  const [header, ...rows] = lines
    .filter((line) => line.startsWith('│'))
    .map((line) => line.slice(1, -1).split('│').map(unquote))
  const numbered = header[0] === '(index)' && rows.every((row, i) => row[0] === String(i))
  if (numbered) return { columns: header.slice(1), rows: rows.map((row) => row.slice(1)) }
  return { columns: header.map((column) => (column === '(index)' ? '' : column)), rows }
}

/** The table of lines that are each a JSON object: a column per key, in the order first seen. */
function jsonTable(lines) {
  const objects = lines.map(jsonRow)
  const columns = [...new Set(objects.flatMap((object) => Object.keys(object)))]
  const text = (value) => (typeof value === 'object' && value !== null ? JSON.stringify(value) : value)
  return { columns, rows: objects.map((object) => columns.map((column) => text(object[column]) ?? '')) }
}

/** The tables and notes of Markdown `text`, in the order printed. */
export function fromMarkdown(text) {
  const tables = []
  const notes = []
  // Blocks: runs of non-blank lines of one kind; a line of text right above a table (no blank line between)
  // is its caption, as a heading above it is.
  const blocks = []
  for (const line of text.split('\n')) {
    const last = blocks.at(-1)
    if (line.trim() === '') blocks.push({ lines: [] })
    else if (line.startsWith('#') || (line.startsWith('┌') && last?.lines.length))
      blocks.push({ lines: [line] })
    else if (last !== undefined && last.lines.length > 0 && kind(last.lines.at(-1)) === kind(line)) {
      last.lines.push(line)
    } else if (last !== undefined && last.lines.length > 0 && kind(last.lines.at(-1)) === 'text') {
      const caption = last.lines.pop()
      blocks.push({ lines: [line], caption: caption.startsWith('#') ? headingText(caption) : caption })
    } else blocks.push({ lines: [line] })
  }
  let heading
  const flushHeading = () => {
    if (heading !== undefined) notes.push(heading)
    heading = undefined
  }
  for (const { lines, caption } of blocks.filter((block) => block.lines.length > 0)) {
    if (kind(lines[0]) !== 'text') {
      if (caption !== undefined) flushHeading()
      const [columns, ...rows] = lines.filter((line) => !isRule(line)).map(cells)
      const tableOf = { json: jsonTable, box: boxTable, table: () => ({ columns, rows }) }
      const table = tableOf[kind(lines[0])](lines)
      const title = caption ?? heading
      tables.push({ ...(title === undefined ? {} : { caption: title }), ...table })
      heading = undefined
      continue
    }
    if (lines[0].startsWith('#')) {
      flushHeading()
      heading = headingText(lines.shift())
    }
    if (lines.length > 0) {
      // A heading above lines of text: its rows as a list, under it.
      const list = (lines.length > 1 || heading !== undefined) && lines.some((line) => !line.startsWith('- '))
      const text = list
        ? lines.map((line) => (line.startsWith('- ') ? line : `- ${line}`)).join('\n')
        : lines.join('\n')
      notes.push(heading === undefined ? text : `${heading}\n\n${text}`)
      heading = undefined
    }
  }
  flushHeading()
  return { tables, notes }
}

/** An argument as a shell reads it back: quoted when it holds more than plain characters. */
const quote = (arg) => (/^[\w./:=@%+,-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`)

/**
 * For a script in JavaScript or TypeScript: what it prints from now on is kept, and when it ends with
 * status 0 its results file is written from that report; a failed run leaves the last one's file.
 * `run.command` is how the script is started (`npx tsx bench/...`): the `settings` the environment gave and
 * the arguments are added to it.
 */
export function writeResultOnExit(name, run, settings) {
  const args = process.argv.slice(2).map((arg) => ` ${quote(arg)}`)
  const command = commandLine(settings, `${run.command}${args.join('')}`)
  const report = []
  const write = process.stdout.write.bind(process.stdout)
  process.stdout.write = (chunk, ...rest) => {
    report.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'))
    return write(chunk, ...rest)
  }
  // An unsettled top-level await ends the process with 13, while 'exit' still reports 0.
  process.on('exit', (code) => {
    if (code === 0 && !process.exitCode)
      writeResult(name, { ...run, command, ...fromMarkdown(report.join('')) })
  })
}

// From a shell script: `node bench/lib/markdown-results.mjs NAME --title T --script S --history H [--npm N]
// --command C < report.md` writes NAME's results file from the report the script printed.
if (process.argv[1] === import.meta.filename) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: Object.fromEntries(
      ['title', 'script', 'npm', 'history', 'command'].map((key) => [key, { type: 'string' }]),
    ),
  })
  const [name] = positionals
  if (name === undefined || values.title === undefined || values.history === undefined) {
    throw new Error(
      'usage: node bench/lib/markdown-results.mjs NAME --title T --script S --history H --command C',
    )
  }
  writeResult(name, { ...values, ...fromMarkdown(readFileSync(0, 'utf8')) })
}
