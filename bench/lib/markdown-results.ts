// A script's printed report as its results file, for the TypeScript scripts: one implementation, in
// markdown-results.mjs.

export { fromMarkdown, writeResultOnExit } from './markdown-results.mjs'
