#!/usr/bin/env node
// The writing rules of docs/contributing.md that no formatter checks: comment lines within 110 columns,
// and prose that speaks of the product, never of issue numbers or notes kept outside the repository.
// Run by `npm run lint`; prints each offending line and exits 1 if there is one.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import ts from 'typescript'

const WIDTH = 110
const SCRIPT = /\.(ts|mts|js|mjs|cjs)$/
const HASH_COMMENTS = /\.(sh|py)$/
const PROSE_ROOTS = ['src/', 'test/', 'bench/', 'docs/', 'examples/', 'README.md', 'BENCHMARKS.md']

/** The numbers (0-based) of the lines that hold a comment, from the parsed file: never a string's text. */
function scriptCommentLines(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const lines = new Set()
  const seen = new Set()
  const add = (ranges) => {
    for (const { pos, end } of ranges ?? []) {
      if (seen.has(pos)) continue
      seen.add(pos)
      const last = source.getLineAndCharacterOfPosition(end).line
      for (let line = source.getLineAndCharacterOfPosition(pos).line; line <= last; line++) lines.add(line)
    }
  }
  // Comments are the trivia around tokens: before each node and after it.
  const visit = (node) => {
    add(ts.getLeadingCommentRanges(text, node.pos))
    add(ts.getTrailingCommentRanges(text, node.end))
    node.getChildren(source).forEach(visit)
  }
  visit(source)
  return lines
}

/** The lines that hold a comment: a script's by its scanner, a shell or Python file's `#` lines. */
function commentLines(file, lines, text) {
  if (SCRIPT.test(file)) return scriptCommentLines(file, text)
  if (!HASH_COMMENTS.test(file)) return new Set()
  return new Set(lines.flatMap((line, i) => (/^\s*#(?!!)/.test(line) ? [i] : [])))
}

const RULES = [
  { what: 'an issue number', pattern: /\bissues?\s+#?\d+|(?<![\w/])#\d+\b/i },
  { what: '"the issue"', pattern: /\bthe issue\b|\bthe issue's\b/i },
  { what: 'notes kept outside the repository', pattern: /\.\.\/shared\/|\bshared\/(spec|design|data)\b/ },
]

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => PROSE_ROOTS.some((root) => file === root || file.startsWith(root)))
  // This file and its test name the patterns they look for.
  .filter((file) => file !== 'scripts/check-writing.mjs' && file !== 'test/scripts/check-writing.test.ts')

const problems = []
for (const file of files) {
  let text
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    continue // listed but deleted in the work tree
  }
  if (text.includes('\u0000')) continue
  const lines = text.split('\n')
  const comments = commentLines(file, lines, text)
  lines.forEach((line, i) => {
    const where = `${file}:${i + 1}`
    if (line.length > WIDTH && comments.has(i)) {
      problems.push(`${where}: comment line of ${line.length} columns (at most ${WIDTH})`)
    }
    for (const rule of RULES) {
      if (rule.pattern.test(line)) problems.push(`${where}: ${rule.what}: ${line.trim().slice(0, 100)}`)
    }
  })
}

if (problems.length > 0) {
  console.error(problems.join('\n'))
  console.error(`\n${problems.length} line(s) break the writing rules of docs/contributing.md.`)
  process.exit(1)
}
console.log(`writing rules: ${files.length} files checked`)
