# Algoserve, for the API (`serve`, port 8000) and for workers (`worker`, port 8001).
#   docker build -t algoserve:1.0.0 .
#   docker run -p 8000:8000 -v algoserve-data:/data algoserve:1.0.0
# The build steps and the start command are the ones test/deploy/dockerfile.test.ts runs (Docker
# itself cannot run there): keep them the same.

# Build: all dependencies (TypeScript, AssemblyScript; better-sqlite3 compiles here), then only the
# production ones are kept. The sources come first: `npm install` builds the service (package.json's
# `prepare`), as it does for the README's `npm install && npm start`.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY wasm ./wasm
COPY public ./public
RUN npm install --no-audit --no-fund
RUN npm prune --omit=dev --no-audit --no-fund

# Run: the built service, its production dependencies and nothing else, as the unprivileged `node`.
FROM node:20-bookworm-slim
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
# Liveness of the API on ALGOSERVE_PORT (compose.yaml gives the worker its own, on port 8001).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.ALGOSERVE_PORT || 8000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself (no shell, no npm in between), so a stop is a
# graceful shutdown (README, Operating).
CMD ["node", "--max-semi-space-size=1", "dist/main.js", "serve"]
