#!/usr/bin/env bash
# Builds the release package: packaging/out/placard-<version>-linux-<arch>.tar.gz and its
# .sha256. Usage: npm run package [-- --arch x64|arm64] [--no-build] [--smoke]
# (npm run package builds, packs and runs the smoke test; --arch arm64 cross-builds on x86_64).
#
# The package holds the built server and console, production node_modules whose native
# addons match the bundled Node runtime (the official binary, from the npm registry's
# node-linux-<arch> package, headers included), install.sh, the systemd unit and docs.
#
# Speed (see docs/operations.md, "Release package"): production modules are installed with
# --ignore-scripts from npm's cache (no install script may download or compile anything);
# argon2 and sharp ship N-API prebuilds that work on any Node; only better-sqlite3 is tied
# to the Node ABI. Its addon for (version, ABI, arch) is compiled once against the bundled
# runtime's own headers in a clean environment (never a stray nodedir), loaded with that
# runtime before it is cached, and taken from the cache after (runtime.sh). Before packing,
# every native part is loaded and exercised with the bundled Node (check-addons.cjs; under
# qemu for arm64).
set -euo pipefail
cd "$(dirname "$0")/.."

ARCH=$(case "$(uname -m)" in aarch64|arm64) echo arm64 ;; *) echo x64 ;; esac)
BUILD=1
SMOKE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) ARCH=$2; shift 2 ;;
    --arch=*) ARCH=${1#--arch=}; shift ;;
    --no-build) BUILD=0; shift ;;
    --smoke) SMOKE=1; shift ;;
    *) echo "package.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
case "$ARCH" in x64|arm64) ;; *) echo "package.sh: --arch must be x64 or arm64" >&2; exit 2 ;; esac

# shellcheck source=packaging/runtime.sh disable=SC1091
. packaging/runtime.sh
VERSION=$(node -p "require('./package.json').version")
NODE_VERSION=$(runtime_version)
OUT=${PLACARD_PACKAGE_OUT:-packaging/out}
NAME="placard-$VERSION-linux-$ARCH"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
t0=$(date +%s)
step() { printf '[package %3ss] %s\n' "$(( $(date +%s) - t0 ))" "$*"; }
npmq() { npm "$@" --no-audit --no-fund --loglevel=error 2>&1 | grep -v 'Unknown user config "nodedir"' || true; }

# 1. Build (unless the caller just did).
if [ "$BUILD" = 1 ]; then
  step "building server and console"
  npm run -s build
fi
[ -f dist/server/src/main.js ] || { echo "package.sh: dist/ is missing: run npm run build" >&2; exit 1; }

# 2. The Node runtime, from the npm registry, cached by version and arch (runtime.sh).
NODE_DIR=$(runtime_node_dir "$ARCH")
ABI=$(runtime_abi "$NODE_DIR")
EXEC_PREFIX=$(runtime_exec_prefix "$ARCH" "$NODE_DIR/bin/node")
step "runtime: Node $NODE_VERSION ($ARCH, ABI $ABI)${EXEC_PREFIX:+, run here under qemu: $EXEC_PREFIX}"

# 3. Production dependencies for the target (--os/--cpu pick sharp's, the ffmpeg installers'
# arm64 packages from the lockfile), without install scripts.
STAGE="$WORK/$NAME"
mkdir -p "$STAGE"
cp package.json package-lock.json "$STAGE/"
step "installing production dependencies (--omit=dev --ignore-scripts --os=linux --cpu=$ARCH)"
(cd "$STAGE" && npmq ci --omit=dev --ignore-scripts --os=linux --cpu="$ARCH" --prefer-offline)
[ -d "$STAGE/node_modules/koa" ] || { echo "package.sh: npm ci failed" >&2; exit 1; }

# 4. better-sqlite3 for the bundled runtime's ABI and arch: compiled once against that
# runtime's headers (cross-compiled for arm64), loaded with it before it is cached.
BS3="$STAGE/node_modules/better-sqlite3"
step "better-sqlite3 $(node -p "require('$BS3/package.json').version") for ABI $ABI linux-$ARCH"
ADDON=$(runtime_addon "$ARCH" "$BS3")
rm -rf "$BS3/build" "$BS3/deps" "$BS3/src"
mkdir -p "$BS3/build/Release"
cp "$ADDON" "$BS3/build/Release/better_sqlite3.node"

# 5. What install scripts would have done, and what the runtime does not need.
for tool in ffmpeg ffprobe; do
  bin="$STAGE/node_modules/@$tool-installer/linux-$ARCH/$tool"
  [ -f "$bin" ] && chmod 0755 "$bin"
done
rm -rf "$STAGE/node_modules/ffmpeg-static" # its binary comes from a download at install time; not bundled
find "$STAGE/node_modules/argon2/prebuilds" -mindepth 1 -maxdepth 1 -type d ! -name "linux-$ARCH" -exec rm -rf {} + 2>/dev/null || true

# 6. Every native part, loaded by the bundled runtime (arm64: under qemu) and made to work.
step "checking the native addons with the bundled Node"
cp packaging/check-addons.cjs "$WORK/check-addons.cjs"
PLACARD_EXEC_PREFIX="$EXEC_PREFIX" runtime_exec "$ARCH" "$NODE_DIR/bin/node" "$WORK/check-addons.cjs" "$STAGE" "$ARCH" ||
  { echo "package.sh: a native addon does not work with the bundled Node $NODE_VERSION ($ARCH): not packing" >&2; exit 1; }

# 7. The program.
step "assembling"
mkdir -p "$STAGE/node/bin" "$STAGE/console" "$STAGE/docs"
cp "$NODE_DIR/bin/node" "$STAGE/node/bin/node"
cp "$NODE_DIR/LICENSE" "$STAGE/node/LICENSE"
cp -r dist "$STAGE/dist"
if [ -f console/dist/index.html ] && [ -f console/dist/play.html ]; then cp -r console/dist "$STAGE/console/dist"; else echo "package.sh: console/dist is missing or incomplete (no index.html / play.html): run npm run build; a package without the console and /play is not shippable" >&2; exit 1; fi
cp -r systemd "$STAGE/systemd"
cp install.sh README.md LICENSE "$STAGE/"
cp docs/operations.md "$STAGE/docs/" 2>/dev/null || true
chmod 0755 "$STAGE/install.sh"
echo "$ARCH" >"$STAGE/ARCH"
printf '%s\n' "$NODE_VERSION" >"$STAGE/NODE_VERSION"
(cd "$STAGE" && find . -type f -print0 | sort -z | xargs -0 sha256sum >"$WORK/SHA256SUMS" && mv "$WORK/SHA256SUMS" SHA256SUMS)

# 8. The tarball and its checksum.
step "compressing"
TARBALL="$OUT/$NAME.tar.gz"
tar -C "$WORK" --owner=0 --group=0 --numeric-owner -cf - "$NAME" | gzip -5 >"$TARBALL.tmp"
mv "$TARBALL.tmp" "$TARBALL"
(cd "$OUT" && sha256sum "$NAME.tar.gz" >"$NAME.tar.gz.sha256")
step "wrote $TARBALL ($(du -h "$TARBALL" | cut -f1)) and $TARBALL.sha256"

if [ "$SMOKE" = 1 ]; then
  step "smoke test"
  bash packaging/smoke.sh "$TARBALL"
fi
