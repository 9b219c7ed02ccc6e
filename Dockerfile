# syntax=docker/dockerfile:1
#
# flowplan's production image. The build stage installs every dependency and compiles the
# TypeScript (`npm run build` → dist/); the runtime stage holds the production dependencies,
# the built dist/ and the `flowplan` command, and runs as the unprivileged `node` user.
# test/ops/dockerfile.test.ts runs these steps (outside Docker) on every `npm test`.
#
# Why Node 24 on Debian 13 (trixie): Node 24 is the current LTS line, and the uWebSockets.js
# build in package-lock.json (npm:@btc-vision/uwebsockets.js@20.57.0) ships its Node 24 binary
# (ABI 137) built against glibc 2.38, which trixie has (2.41) and Debian 12 lacks (2.36).
# test/ops/dockerfile.test.ts runs these steps on Node 24 in `npm run test:node24`.
# Pin the base by digest in your registry mirror for reproducible builds.
ARG NODE_IMAGE=node:24-trixie-slim

FROM ${NODE_IMAGE} AS base
# The npm the project's machines use: it honours package.json `allowScripts` (which install
# scripts run), as the npm bundled with an older Node would not.
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
# uWebSockets.js ships binaries for every platform and Node ABI: the build stops here unless
# the one for this image's Node loads (the server would otherwise serve on node:http), and
# keeps only that one.
RUN node -e "require('uWebSockets.js')" && node -e "const fs = require('fs'); const dir = 'node_modules/uWebSockets.js/'; const keep = 'uws_' + process.platform + '_' + process.arch + '_' + process.versions.modules + '.node'; for (const file of fs.readdirSync(dir)) if (file.endsWith('.node') && file !== keep) fs.rmSync(dir + file);"
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
