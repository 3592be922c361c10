// The types of checkout.mjs, whose comments say what it does.

export function otherCheckout(rev: string, options?: { build?: boolean }): { path: string; remove(): void }
