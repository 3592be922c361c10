// The types of write-benchmarks-md.mjs, whose comments say what it writes.

export function render(results: Record<string, unknown>[]): string
