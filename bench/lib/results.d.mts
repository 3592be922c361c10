// The types of results.mjs, whose comments say what each function does.

export const RESULTS: string

export interface Table {
  caption?: string
  columns: string[]
  rows: (string | number)[][]
}

export interface Run {
  title: string
  script: string
  npm?: string
  history: string
  command: string
  tables?: Table[]
  notes?: string[]
}

export function machine(): string
export function commandLine(settings: string[], command: string): string
export function writeResult(name: string, run: Run): void
export function readResults(folder?: string): Record<string, unknown>[]
