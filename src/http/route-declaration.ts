// What each route is, declared once in its `config` and read by everything that treats routes apart:
// the error handler (the error shape), the API keys and the rate limit (the routes they guard) and the
// OpenAPI document (where it says a key is needed or a 429 may come). Each reader decides once per
// route, when the route is registered, or with a property read on the request: never by its path.
import type { FastifyContextConfig, FastifyInstance } from 'fastify'

/** What a route serves, and so who may call it and what guards it (docs/security.md). */
export type RouteKind =
  /** The API proper: behind a key when keys are on, and rate-limited when limits are on. */
  | 'api'
  /** GET /metrics: behind a key when ALGOSERVE_API_KEYS_FOR_METRICS says so. */
  | 'metrics'
  /** The OpenAPI document and its readers: behind a key when ALGOSERVE_API_KEYS_FOR_DOCS says so. */
  | 'docs'
  /** Liveness and readiness: always open, for load balancers and orchestrators. */
  | 'health'
  /** The dashboard's page and assets: they hold no data; the page sends the user's key with its calls. */
  | 'dashboard'
  /** CORS preflights: browsers send them without credentials. */
  | 'preflight'

/** How a route's errors are written: flat (POST /invoke) or wrapped under `detail` (the job routes). */
export type ErrorShape = 'flat' | 'wrapped'

declare module 'fastify' {
  interface FastifyContextConfig {
    kind: RouteKind
    /** Required on an API route; flat elsewhere. */
    errorShape?: ErrorShape
  }
}

/** A route's declaration: its `config` less what other plugins keep there. */
export type RouteDeclaration = Pick<FastifyContextConfig, 'kind' | 'errorShape'>

/** Rate limits, when on, apply to the API and nothing else. */
export const isRateLimited = (route: RouteDeclaration): boolean => route.kind === 'api'

/**
 * Checks every route's declaration as it is registered, and gives the routes a plugin registers
 * (Swagger UI's, the CORS preflight) the declaration of the plugin. Created before anything that reads
 * a declaration when a route is registered, so that it runs first.
 */
export class RouteDeclarations {
  #supplied: RouteDeclaration | undefined

  constructor(app: FastifyInstance) {
    app.addHook('onRoute', (route) => {
      const config = { ...this.#supplied, ...route.config } as Partial<RouteDeclaration>
      const name = `${[route.method].flat().join(',')} ${route.url}`
      if (config.kind === undefined) {
        throw new Error(`${name} declares no kind in its config (src/http/route-declaration.ts)`)
      }
      if (config.kind === 'api' && config.errorShape === undefined) {
        throw new Error(`${name} is an API route and declares no errorShape in its config`)
      }
      route.config = config as RouteDeclaration
    })
  }

  /** Registers a plugin whose routes, declaring nothing themselves, are all of one declaration. */
  async registering(declaration: RouteDeclaration, register: () => PromiseLike<unknown>): Promise<void> {
    this.#supplied = declaration
    try {
      await register()
    } finally {
      this.#supplied = undefined
    }
  }
}
