# syntax=docker/dockerfile:1
# The gateway as a small non-root image: production dependencies only, the server compiled to one
# bundle (dist/main.js, as `npm start` builds and runs it), no tests, benchmarks or local data.
# See doc/operations.md "Container".

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
# esbuild comes with the production dependencies (through tsx); see doc/bench.md "Production start".
RUN node scripts/build.mjs
# Sources stay root-owned and read-only to the server; only its data folder (embedded PGlite,
# debug files when no DATABASE_URL is set) is writable.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# node itself is PID 1's child-free process: SIGTERM from `docker stop` reaches the server,
# which drains running turns within SHUTDOWN_GRACE_MS (keep it below the stop timeout).
CMD ["node", "--enable-source-maps", "dist/main.js"]
