# syntax=docker/dockerfile:1
#
# flowplan's production image. The build stage installs every dependency and compiles the
# TypeScript (`npm run build` → dist/); the runtime stage holds the production dependencies,
# the built dist/ and the `flowplan` command, and runs as the unprivileged `node` user.
# test/ops/dockerfile.test.ts runs these steps (outside Docker) on every `npm test`.
#
# Why Node 20 on Debian 12 (bookworm): the uWebSockets.js build in package-lock.json
# (npm:@trufflesuite/uws-js-unofficial@20.30.0-unofficial.0) ships native binaries for the
# Node ABIs 93, 108 and 115 (Node 16, 18, 20), needing glibc 2.27 at most. On Node 22 or 24
# it falls back to an imitation flowplan cannot run on (it refuses to start). The only npm
# builds with Node 22/24 binaries (ABIs 127, 137: @btc-vision/uwebsockets.js 20.57.0) need
# glibc 2.38: they would load on Debian 13 (trixie, glibc 2.41) but not on the Debian 12
# machines where flowplan is developed and tested (glibc 2.36), so such an image would run a
# uWS release and a Node that no test here has run. Node 20 is past its end of life (April
# 2026): README ("Runtime") and docs/operations.md ("Moving to a newer Node") say how to move.
# Pin the base by digest in your registry mirror for reproducible builds.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS base
# The npm the project's machines use: it honours package.json `allowScripts` (which install
# scripts run); the npm 10 bundled with Node 20 would run every dependency's install script.
RUN npm install -g npm@11.19.1 && npm cache clean --force
WORKDIR /app

FROM base AS build
# patches/: npm ci's postinstall applies them to node_modules (patches/README.md).
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY sql ./sql
COPY workers ./workers
COPY src ./src
RUN npm run build

FROM base AS runtime
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --omit=dev && npm cache clean --force
# uWebSockets.js ships binaries for every platform and Node ABI (113 MB): keep the one this
# image loads, and stop the build here if there is none for its Node.
RUN node -e "const fs = require('fs'); const dir = 'node_modules/uWebSockets.js/'; const keep = 'uws_' + process.platform + '_' + process.arch + '_' + process.versions.modules + '.node'; if (!fs.existsSync(dir + 'binaries/' + keep)) { console.error('uWebSockets.js has no ' + keep); process.exit(1); } for (const sub of ['binaries/', 'dist/']) for (const file of fs.readdirSync(dir + sub)) if (file.endsWith('.node') && sub + file !== 'binaries/' + keep) fs.rmSync(dir + sub + file);"
COPY bin ./bin
COPY --from=build /app/dist ./dist
# Written by the process: mail as .eml files when SMTP_URL is unset (and an embedded
# Postgres, if DATABASE_URL is unset). Mount a volume here to keep them.
RUN mkdir -p /var/lib/flowplan && chown node:node /var/lib/flowplan
# Listen on every interface of the container; BASE_URL (the address clients use) must be
# set at run time: on plain http and a host other than localhost, flowplan refuses to start
# unless APP_ALLOW_INSECURE=1 (README: Configuration).
ENV HOST=0.0.0.0 PORT=8080 METRICS_HOST=0.0.0.0 METRICS_PORT=9464 FLOWPLAN_DATA_DIR=/var/lib/flowplan
USER node
# The API, and the Prometheus listener (publish it to your scraper only).
EXPOSE 8080 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself as PID 1: it receives SIGTERM and drains in-flight requests before exiting.
CMD ["node", "dist/src/main.js"]
