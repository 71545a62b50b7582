# Portico's image (docs/operations.md, "The container image"): built in three stages so that the
# runtime holds the built dist/ and the production dependencies only, never the compiler or the tests.
#   docker build -t portico .          docker run -e DATABASE_URL=... -p 3000:3000 portico
# test/foundation/image.test.ts holds this file to its promises (stages, user, health check, flags).
ARG NODE_IMAGE=node:20-bookworm-slim

# Production dependencies only. No install scripts: the package's own `prepare` builds from sources
# this stage does not have, and no production dependency needs a script to work.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci refuses a lockfile written where other platforms' optional builds were not served (.ci/run
# says why); npm install --no-save then installs exactly the locked versions.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  || npm install --omit=dev --ignore-scripts --no-save --no-audit --no-fund

# The build: every dependency (SWC), then the sources into dist/.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund \
  || npm install --ignore-scripts --no-save --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
RUN node scripts/build.js product

# The runtime: Node, openssl (the sandbox makes its development certificates with it), the build and
# the production dependencies, owned by root and run as the image's unprivileged `node` user.
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends openssl ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Read at run time: the upstream contracts and the script that makes the development certificates.
COPY openapi/upstream ./openapi/upstream
COPY certs/make-dev-certs.sh certs/README.md ./certs/
# What the process writes: the embedded engine's data and the sandbox keys (data/), the development
# certificates (certs/dev/, a volume in docker-compose.yml that takes this directory's owner).
RUN mkdir -p data certs/dev && chown node:node data certs/dev
USER node
EXPOSE 3000
# Readiness, as the load balancer sees it: the database answers and the client certificate passes.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The same Node flags as `npm start` (package.json); node is the process that receives SIGTERM.
CMD ["node", "--max-semi-space-size=16", "--heap-growing-percent=30", "dist/main.js"]
