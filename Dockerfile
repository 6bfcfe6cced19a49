# One image for every component of a region: `hcp-operators operators|frontend|maestro-agent`
# (operators/hcp-operators.ts). Node 24 runs the TypeScript sources directly (type stripping), so
# there is no build step. The production dependencies are installed in a stage of their own, so
# npm's cache and the lockfile's dev dependencies never reach the final image. It runs as the
# image's unprivileged node user (uid 1000) and writes nothing at run time, so the pod can mount
# its root filesystem read-only. .dockerignore keeps tests, hack/ (harness, simulators, emulators),
# hcpctl and docs out of the build context; test/lint/image.test.ts checks what is left.
FROM node:24-bookworm-slim AS dependencies
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=dependencies /app/node_modules/ node_modules/
COPY package.json ./
COPY operators/ operators/
USER 1000:1000
EXPOSE 8080 8081 8443
ENTRYPOINT ["node", "operators/hcp-operators.ts"]
CMD ["--help"]
