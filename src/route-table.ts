// Every route the app has, as OpenAPI-style templates, known without asking Fastify per request: it
// labels the HTTP metrics (`/jobs/{job_id}`) and answers which methods a path allows (405's `Allow`).
import type { FastifyInstance } from 'fastify'

interface Route {
  template: string
  pattern: RegExp
  methods: Set<string>
}

export class RouteTable {
  // Static paths before parametric ones before wildcards, as the router prefers them.
  readonly #routes: Route[] = []

  /** Collects every route registered on `app` from now on. */
  collect(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => this.add(route.url, [route.method].flat()))
  }

  add(url: string, methods: string[]): void {
    const template = url.replace(/:([^/]+)/g, '{$1}')
    let route = this.#routes.find((r) => r.template === template)
    if (route === undefined) {
      const source = url
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/:[^/]+/g, '[^/]+')
        .replace(/\*/g, '.*')
      route = { template, pattern: new RegExp(`^${source}$`), methods: new Set() }
      this.#routes.push(route)
      this.#routes.sort((a, b) => rank(a.template) - rank(b.template))
    }
    for (const method of methods) route.methods.add(method)
  }

  /** The template of the route a request reaches, or undefined when it reaches none. */
  template(method: string, url: string): string | undefined {
    const path = pathOf(url)
    return this.#routes.find((r) => r.methods.has(method) && r.pattern.test(path))?.template
  }

  /** Every method some route takes at this path, sorted. */
  allowedMethods(url: string): string[] {
    const path = pathOf(url)
    const methods = new Set<string>()
    for (const route of this.#routes)
      if (route.pattern.test(path)) for (const m of route.methods) methods.add(m)
    return [...methods].sort()
  }
}

function rank(template: string): number {
  return template.includes('*') ? 2 : template.includes('{') ? 1 : 0
}

function pathOf(url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}
