# The operators image: Node 24 runs the TypeScript sources directly (type stripping), so there is
# no build step; dev dependencies stay out of the image, and .dockerignore keeps tests, hack/ (the
# harness and the HyperShift simulator) and docs out of the build context.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY operators/ operators/
COPY crds/ crds/
USER node
EXPOSE 8080
ENTRYPOINT ["node", "operators/main.ts"]
