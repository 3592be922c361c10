# Algoserve, for the API (`serve`, port 8000) and for workers (`worker`, port 8001).
#   docker build -t algoserve:1.0.0 .
#   docker run -p 8000:8000 -v algoserve-data:/data algoserve:1.0.0
# The build steps, the start command and the health check are the ones test/deploy/dockerfile.test.ts
# runs (Docker itself cannot run there): keep them the same.

# Build, on the current Node.js LTS line. The dependencies first, from the lock file alone: their layer
# is kept while only the sources change. No install scripts: the project's own `prepare` (the build)
# needs the sources, and the one dependency that has a script, better-sqlite3, serves Node 20 and 22
# only (from Node 24 the job store is on node:sqlite).
FROM node:24-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.types.json ./
COPY src ./src
COPY wasm ./wasm
COPY public ./public
RUN npm run build
# Only the production dependencies are kept, without the optional ones: better-sqlite3 (see above), and
# native add-ons for features the service does not use (msgpackr's fast unpacking, piscina's nice).
RUN npm prune --omit=dev --omit=optional --no-audit --no-fund

# Run: the built service, its production dependencies and nothing else, as the unprivileged `node`.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    ALGOSERVE_HOST=0.0.0.0 \
    ALGOSERVE_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/wasm/build ./wasm/build
COPY --from=build /app/public ./public
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8000 8001
# Liveness of whichever this container runs: the API on ALGOSERVE_PORT or a worker on
# ALGOSERVE_WORKER_PORT (one container runs one of them; the other port is closed).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const e = process.env; Promise.any([e.ALGOSERVE_PORT || 8000, e.ALGOSERVE_WORKER_PORT || 8001].map((port) => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => { if (!r.ok) throw new Error(r.status) }))).then(() => process.exit(0), () => process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself (no shell, no npm in between), so a stop is a
# graceful shutdown (docs/operating.md, Shutdown).
CMD ["node", "--max-semi-space-size=1", "dist/main.js", "serve"]
