# The service's container image. Each stage runs exactly the commands test/production-path.test.ts runs
# on a clean copy of the repository: `npm ci`, `npm run build`, `npm prune --omit=dev --omit=optional`,
# then the built executable (`node dist/src/main.js <command>`) with production dependencies only: the
# embedded PostgreSQL (an optional dependency, for `npm start` on a laptop) is not in the image, so
# DATABASE_URL is required.
#
#   docker build -t voice-call-api .
#   docker run --rm -e DATABASE_URL=postgres://... voice-call-api migrate
#   docker run -p 3000:3000 -e DATABASE_URL=postgres://... -e MIGRATE_ON_START=false voice-call-api serve --role api
#
# The same image runs the conformance check against a deployment (no database; a test key, see
# docs/conformance.md for a CI job that keeps its JUnit report):
#
#   docker run --rm -e VOICE_CALL_API_KEY=svc_test_... voice-call-api conformance --base-url https://HOST/api/v1

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev --omit=optional

FROM node:24-bookworm-slim AS runtime
# The API listens on every interface of the container; metrics stay on its loopback unless
# METRICS_HOST says otherwise (set it to 0.0.0.0 only on a network your scraper alone can reach).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    METRICS_HOST=127.0.0.1
WORKDIR /app
# What the built executable reads at run time: its code, its production dependencies, the generated
# contract (spec, validators) and the database functions installed by `migrate`.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/generated ./generated
COPY --from=build /app/db/functions ./db/functions
USER node
EXPOSE 3000 9464
# The image's own probe: 200 from /readyz of the API role (a worker-only container is probed on METRICS_PORT).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "--max-old-space-size=192", "--no-allocation-site-pretenuring", "--max-semi-space-size=16", "dist/src/main.js"]
CMD ["serve"]
