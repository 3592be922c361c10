// Every route the app has, so that a request for a known path with another method is a 405 with the
// methods the path allows (Fastify itself answers 404).
import type { FastifyInstance } from 'fastify'

interface Route {
  url: string
  pattern: RegExp
  methods: Set<string>
}

export class RouteTable {
  readonly #routes: Route[] = []

  /** Collects every route registered on `app` from now on. */
  constructor(app: FastifyInstance) {
    app.addHook('onRoute', (route) => this.#add(route.url, [route.method].flat()))
  }

  #add(url: string, methods: string[]): void {
    let route = this.#routes.find((r) => r.url === url)
    if (route === undefined) {
      const source = url
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/:[^/]+/g, '[^/]+')
        .replace(/\*/g, '.*')
      route = { url, pattern: new RegExp(`^${source}$`), methods: new Set() }
      this.#routes.push(route)
    }
    for (const method of methods) route.methods.add(method)
  }

  /** The raw (undecoded) path parameters of the route that takes this method at this path. */
  parametersOf(url: string, method: string): Record<string, string> {
    const path = pathOf(url)
    const route = this.#routes.find((r) => r.methods.has(method) && r.pattern.test(path))
    if (route === undefined) return {}
    const names = route.url.split('/')
    const parts = path.split('/')
    const parameters: Record<string, string> = {}
    names.forEach((name, i) => {
      if (name.startsWith(':')) parameters[name.slice(1)] = parts[i] ?? ''
    })
    return parameters
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

function pathOf(url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}
