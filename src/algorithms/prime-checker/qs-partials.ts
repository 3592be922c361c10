// The quadratic sieve's partial relations (Lenstra and Manasse's large prime variation): relations with one
// large prime and, from about 50 digits, two (Lenstra and Manasse 1994, the double large prime variation)
// are edges between their large primes (1 for none), every cycle of the graph combines into a relation whose
// large primes appear squared, and a union-find counts the cycles as they close, so that the sieve knows
// when it has enough relations without building the cycles each time. Apart from the sieve, as its
// bookkeeping works on whole relations and none of the sieve's state.
import type { Budget } from './budget.js'
import type { Relation } from './qs-sieve.js'

/**
 * Partial relations as edges between their large primes (a single large prime's other end is 1), with a
 * union-find over the primes that counts the independent cycles as edges arrive: an edge whose ends are
 * already connected closes one.
 */
export class PartialGraph {
  private readonly parent = new Map<number, number>()
  private readonly edges: Relation[] = []
  cycles = 0

  add(r: Relation): void {
    const [u, v] = ends(r)
    const ru = this.find(u)
    const rv = this.find(v)
    if (ru === rv) this.cycles++
    else this.parent.set(ru, rv)
    this.edges.push(r)
  }

  private find(x: number): number {
    let root = x
    for (let up = this.parent.get(root); up !== undefined; up = this.parent.get(root)) root = up
    // Path compression keeps later finds short.
    for (let at = x; at !== root; ) {
      const up = this.parent.get(at) as number
      this.parent.set(at, root)
      at = up
    }
    return root
  }

  /**
   * One relation per independent cycle: a spanning forest by breadth-first search, then for each edge not in
   * it, the product of the edge and the tree paths from its ends to where they meet.
   */
  combined(n: bigint, budget?: Budget): Relation[] | undefined {
    const adjacent = new Map<number, number[]>()
    this.edges.forEach((r, e) => {
      for (const end of ends(r)) {
        const list = adjacent.get(end)
        if (list) list.push(e)
        else adjacent.set(end, [e])
      }
    })
    const depth = new Map<number, number>()
    const via = new Map<number, number>()
    const inTree = new Uint8Array(this.edges.length)
    const roots = adjacent.has(1) ? [1, ...adjacent.keys()] : [...adjacent.keys()]
    for (const root of roots) {
      if (depth.has(root)) continue
      depth.set(root, 0)
      const queue = [root]
      for (let q = 0; q < queue.length; q++) {
        const u = queue[q] as number
        for (const e of adjacent.get(u) as number[]) {
          const w = other(this.edges[e] as Relation, u)
          if (depth.has(w)) continue
          depth.set(w, (depth.get(u) as number) + 1)
          via.set(w, e)
          inTree[e] = 1
          queue.push(w)
        }
      }
    }
    const result: Relation[] = []
    for (let e = 0; e < this.edges.length; e++) {
      if (inTree[e]) continue
      if (budget && (e & 1023) === 0 && budget.timeIsUp()) return undefined
      const r = this.edges[e] as Relation
      const path = [r]
      let [u, v] = ends(r)
      while (u !== v) {
        const deeper = (depth.get(u) as number) >= (depth.get(v) as number)
        const at = deeper ? u : v
        const edge = this.edges[via.get(at) as number] as Relation
        path.push(edge)
        if (deeper) u = other(edge, u)
        else v = other(edge, v)
      }
      result.push(path.reduce((a, b) => combine(a, b, n)))
    }
    return result
  }
}

/** A partial relation's two ends: its large primes, or its one large prime and 1. */
function ends(r: Relation): [number, number] {
  return [r.large[0] as number, r.large.length > 1 ? (r.large[1] as number) : 1]
}

/** The end of the edge r other than u. */
function other(r: Relation, u: number): number {
  const [a, b] = ends(r)
  return a === u ? b : a
}

/** The product of two relations. */
function combine(a: Relation, b: Relation, n: bigint): Relation {
  return {
    y: (a.y * b.y) % n,
    neg: a.neg !== b.neg,
    indices: a.indices.concat(b.indices),
    large: a.large.concat(b.large),
  }
}
