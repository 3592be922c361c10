// The types of markdown-results.mjs, whose comments say what each function does.
import type { Run, Table } from './results.mjs'

export function fromMarkdown(text: string): { tables: Table[]; notes: string[] }
export function writeResultOnExit(name: string, run: Omit<Run, 'tables' | 'notes'>, settings: string[]): void
