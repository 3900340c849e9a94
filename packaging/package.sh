#!/usr/bin/env bash
# Builds the release package: packaging/out/placard-<version>-linux-<arch>.tar.gz and its
# .sha256. Usage: npm run package [-- --arch x64|arm64] [--no-build]
#
# The package holds the built server and console, production node_modules whose native
# addons match the bundled Node runtime (the official binary, from the npm registry's
# node-linux-<arch> package, headers included), install.sh, the systemd unit and docs.
#
# Speed (see docs/operations.md, "Release package"): production modules are installed with
# --ignore-scripts from npm's cache (no install script may download or compile anything);
# argon2 and sharp ship N-API prebuilds that work on any Node; only better-sqlite3 is tied
# to the Node ABI. Its addon for (version, ABI, arch) is taken from the cache, or copied from
# this checkout when the ABIs match, and compiled only when neither has it.
set -euo pipefail
cd "$(dirname "$0")/.."

host_arch() { case "$(uname -m)" in x86_64|amd64) echo x64 ;; aarch64|arm64) echo arm64 ;; *) uname -m ;; esac; }
ARCH=$(host_arch)
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) ARCH=$2; shift 2 ;;
    --arch=*) ARCH=${1#--arch=}; shift ;;
    --no-build) BUILD=0; shift ;;
    *) echo "package.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
case "$ARCH" in x64|arm64) ;; *) echo "package.sh: --arch must be x64 or arm64" >&2; exit 2 ;; esac

VERSION=$(node -p "require('./package.json').version")
NODE_VERSION=$(tr -d ' \n' < packaging/node-version)
CACHE=${PLACARD_PACKAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/placard-package}
OUT=packaging/out
NAME="placard-$VERSION-linux-$ARCH"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$CACHE" "$OUT"
t0=$(date +%s)
step() { printf '[package %3ss] %s\n' "$(( $(date +%s) - t0 ))" "$*"; }
npmq() { npm "$@" --no-audit --no-fund --loglevel=error 2>&1 | grep -v 'Unknown user config "nodedir"' || true; }

# 1. Build (unless the caller just did).
if [ "$BUILD" = 1 ]; then
  step "building server and console"
  npm run -s build
fi
[ -f dist/server/src/main.js ] || { echo "package.sh: dist/ is missing: run npm run build" >&2; exit 1; }

# 2. The Node runtime, from the npm registry, cached by version and arch.
NODE_DIR="$CACHE/node-$NODE_VERSION-linux-$ARCH"
if [ ! -x "$NODE_DIR/bin/node" ]; then
  step "fetching node-linux-$ARCH@$NODE_VERSION"
  rm -rf "$NODE_DIR.tmp" && mkdir -p "$NODE_DIR.tmp"
  (cd "$NODE_DIR.tmp" && npmq pack "node-linux-$ARCH@$NODE_VERSION")
  tar -xzf "$NODE_DIR.tmp/node-linux-$ARCH-$NODE_VERSION.tgz" -C "$NODE_DIR.tmp"
  rm -rf "$NODE_DIR" && mv "$NODE_DIR.tmp/package" "$NODE_DIR" && rm -rf "$NODE_DIR.tmp"
fi
ABI=$(sed -n 's/^#define NODE_MODULE_VERSION \([0-9][0-9]*\)$/\1/p' "$NODE_DIR/include/node/node_version.h" | head -n 1)
[ -n "$ABI" ] || { echo "package.sh: cannot read NODE_MODULE_VERSION from the runtime's headers" >&2; exit 1; }
step "runtime: Node $NODE_VERSION ($ARCH, ABI $ABI)"

# 3. Production dependencies, without install scripts.
STAGE="$WORK/$NAME"
mkdir -p "$STAGE"
cp package.json package-lock.json "$STAGE/"
step "installing production dependencies (--omit=dev --ignore-scripts)"
(cd "$STAGE" && npmq ci --omit=dev --ignore-scripts --os=linux --cpu="$ARCH" --prefer-offline)
[ -d "$STAGE/node_modules/koa" ] || { echo "package.sh: npm ci failed" >&2; exit 1; }

# 4. better-sqlite3 for the bundled runtime's ABI.
BS3="$STAGE/node_modules/better-sqlite3"
BS3_VERSION=$(node -p "require('$BS3/package.json').version")
ADDON_CACHE="$CACHE/addons/better-sqlite3-$BS3_VERSION-abi$ABI-linux-$ARCH.node"
HOST_ABI=$(node -p process.versions.modules)
if [ -f "$ADDON_CACHE" ]; then
  step "better-sqlite3 $BS3_VERSION: cached addon for ABI $ABI"
elif [ "$HOST_ABI" = "$ABI" ] && [ "$(host_arch)" = "$ARCH" ] && [ -f node_modules/better-sqlite3/build/Release/better_sqlite3.node ] &&
  [ "$(node -p "require('./node_modules/better-sqlite3/package.json').version")" = "$BS3_VERSION" ]; then
  step "better-sqlite3 $BS3_VERSION: reusing this checkout's addon (same ABI $ABI)"
  mkdir -p "$(dirname "$ADDON_CACHE")"
  cp node_modules/better-sqlite3/build/Release/better_sqlite3.node "$ADDON_CACHE"
else
  [ "$(host_arch)" = "$ARCH" ] || { echo "package.sh: no cached better-sqlite3 addon for $ARCH ABI $ABI; build the $ARCH package on an $ARCH machine once (the cache then serves it)" >&2; exit 1; }
  step "better-sqlite3 $BS3_VERSION: compiling for ABI $ABI (once; cached in $CACHE/addons)"
  NODE_GYP=$(node -p "require.resolve('node-gyp/bin/node-gyp.js', { paths: [require('path').join(require('path').dirname(process.execPath), '../lib/node_modules/npm'), process.cwd()] })")
  (cd "$BS3" && "$NODE_DIR/bin/node" "$NODE_GYP" rebuild --release --nodedir="$NODE_DIR" --jobs=max >"$WORK/gyp.log" 2>&1) || { tail -40 "$WORK/gyp.log"; exit 1; }
  mkdir -p "$(dirname "$ADDON_CACHE")"
  cp "$BS3/build/Release/better_sqlite3.node" "$ADDON_CACHE.tmp" && mv "$ADDON_CACHE.tmp" "$ADDON_CACHE"
fi
rm -rf "$BS3/build" "$BS3/deps" "$BS3/src"
mkdir -p "$BS3/build/Release"
cp "$ADDON_CACHE" "$BS3/build/Release/better_sqlite3.node"

# 5. What install scripts would have done, and what the runtime does not need.
for tool in ffmpeg ffprobe; do
  bin="$STAGE/node_modules/@$tool-installer/linux-$ARCH/$tool"
  [ -f "$bin" ] && chmod 0755 "$bin"
done
rm -rf "$STAGE/node_modules/ffmpeg-static" # its binary comes from a download at install time; not bundled
find "$STAGE/node_modules/argon2/prebuilds" -mindepth 1 -maxdepth 1 -type d ! -name "linux-$ARCH" -exec rm -rf {} + 2>/dev/null || true

# 6. The program.
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

# 7. The tarball and its checksum.
step "compressing"
TARBALL="$OUT/$NAME.tar.gz"
tar -C "$WORK" --owner=0 --group=0 --numeric-owner -cf - "$NAME" | gzip -5 >"$TARBALL.tmp"
mv "$TARBALL.tmp" "$TARBALL"
(cd "$OUT" && sha256sum "$NAME.tar.gz" >"$NAME.tar.gz.sha256")
step "wrote $TARBALL ($(du -h "$TARBALL" | cut -f1)) and $TARBALL.sha256"
