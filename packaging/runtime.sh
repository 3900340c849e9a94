# shellcheck shell=bash
# The bundled runtime and its better-sqlite3 addon, shared by package.sh, smoke.sh,
# with-runtime.sh and CI. Source it from the repository's root; it defines functions only.
#
#   runtime_version                 the Node version of packaging/node-version
#   runtime_node_dir ARCH           fetch (once) node-linux-ARCH@version from the npm registry
#                                   into the cache, check it runs and is that version; prints the dir
#   runtime_exec ARCH CMD...        run a binary of ARCH here: directly, or for arm64 on another
#                                   machine under qemu-user (binfmt when it works, else qemu
#                                   invoked explicitly)
#   runtime_exec_prefix ARCH        the command prefix runtime_exec uses (empty, or qemu ...)
#   runtime_addon ARCH BS3_DIR      better-sqlite3's addon for the runtime's ABI and ARCH,
#                                   compiled once from BS3_DIR's sources against THAT runtime's
#                                   headers in a clean environment, loaded with the runtime
#                                   before it enters the cache (and again when taken from it);
#                                   prints its path
#
# Cache: $PLACARD_PACKAGE_CACHE, default ~/.cache/placard-package.

RUNTIME_CACHE=${PLACARD_PACKAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/placard-package}
QEMU_AARCH64=${PLACARD_QEMU_AARCH64:-qemu-aarch64-static}
AARCH64_SYSROOT=${PLACARD_AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}

runtime_log() { printf 'runtime: %s\n' "$*" >&2; }
runtime_die() { printf 'runtime: error: %s\n' "$*" >&2; exit 1; }

runtime_host_arch() { case "$(uname -m)" in x86_64|amd64) echo x64 ;; aarch64|arm64) echo arm64 ;; *) uname -m ;; esac; }

# PLACARD_NODE_VERSION overrides the file (to reproduce a problem on another runtime).
runtime_version() {
  if [ -n "${PLACARD_NODE_VERSION:-}" ]; then printf '%s\n' "$PLACARD_NODE_VERSION"; return; fi
  grep -v '^[[:space:]]*#' packaging/node-version | tr -d ' \t' | grep -m 1 .
}

# The prefix that runs an ARCH binary here. For arm64 on x86_64: binfmt_misc (qemu-user-static
# registered, with the loader found through QEMU_LD_PREFIX) when it works, else qemu explicitly.
runtime_exec_prefix() {
  local arch=$1 probe=${2:-}
  if [ "$arch" = "$(runtime_host_arch)" ]; then return 0; fi
  [ "$arch" = arm64 ] || runtime_die "cannot run $arch binaries on $(runtime_host_arch)"
  command -v "$QEMU_AARCH64" >/dev/null || runtime_die "$QEMU_AARCH64 is missing (apt-get install qemu-user-static)"
  [ -e "$AARCH64_SYSROOT/lib/ld-linux-aarch64.so.1" ] || runtime_die "no aarch64 loader in $AARCH64_SYSROOT (apt-get install g++-aarch64-linux-gnu)"
  if [ -n "$probe" ] && [ -z "${PLACARD_NO_BINFMT:-}" ] && QEMU_LD_PREFIX=$AARCH64_SYSROOT "$probe" --version >/dev/null 2>&1; then
    return 0 # binfmt runs it
  fi
  printf '%s -L %s' "$QEMU_AARCH64" "$AARCH64_SYSROOT"
}

runtime_exec() {
  local arch=$1
  shift
  local prefix
  prefix=$(runtime_exec_prefix "$arch" "$1")
  # shellcheck disable=SC2086 # the prefix is words
  QEMU_LD_PREFIX=$AARCH64_SYSROOT $prefix "$@"
}

runtime_node_dir() {
  local arch=$1 version dir tmp
  version=$(runtime_version)
  [ -n "$version" ] || runtime_die "packaging/node-version names no version"
  dir="$RUNTIME_CACHE/node-$version-linux-$arch"
  if [ ! -x "$dir/bin/node" ]; then
    runtime_log "fetching node-linux-$arch@$version from the npm registry"
    mkdir -p "$RUNTIME_CACHE"
    tmp=$(mktemp -d "$RUNTIME_CACHE/.node-XXXXXX")
    # npm pack checks the tarball against the registry's integrity hash.
    (cd "$tmp" && npm pack "node-linux-$arch@$version" --loglevel=error >/dev/null 2>"$tmp/npm.log") || { cat "$tmp/npm.log" >&2; rm -rf "$tmp"; runtime_die "npm pack node-linux-$arch@$version failed"; }
    tar -xzf "$tmp/node-linux-$arch-$version.tgz" -C "$tmp" || { rm -rf "$tmp"; runtime_die "cannot unpack node-linux-$arch"; }
    rm -rf "$dir" && mv "$tmp/package" "$dir" && rm -rf "$tmp"
  fi
  local got
  got=$(runtime_exec "$arch" "$dir/bin/node" --version 2>&1) || runtime_die "the cached runtime $dir does not run here: $got"
  [ "$got" = "v$version" ] || runtime_die "the cached runtime $dir is $got, not v$version"
  printf '%s\n' "$dir"
}

runtime_abi() {
  sed -n 's/^#define NODE_MODULE_VERSION \([0-9][0-9]*\)$/\1/p' "$1/include/node/node_version.h" | head -n 1
}

# Loads ADDON with the runtime through better-sqlite3's JS (BS3_DIR/lib) and runs a query.
runtime_check_addon() {
  local arch=$1 node_dir=$2 bs3=$3 addon=$4
  runtime_exec "$arch" "$node_dir/bin/node" -e '
    const [lib, addon, arch] = process.argv.slice(1);
    if (process.arch !== arch) throw new Error("runtime is " + process.arch);
    const Database = require(lib);
    const db = new Database(":memory:", { nativeBinding: addon });
    const v = db.prepare("select sqlite_version() as v").get().v;
    db.close();
    console.log("better-sqlite3 addon loads on node " + process.version + " " + process.arch + " (ABI " + process.versions.modules + "), SQLite " + v);
  ' "$bs3" "$addon" "$arch"
}

runtime_addon() {
  local arch=$1 bs3=$2 node_dir abi version cached work log
  node_dir=$(runtime_node_dir "$arch") || exit 1
  abi=$(runtime_abi "$node_dir")
  [ -n "$abi" ] || runtime_die "cannot read NODE_MODULE_VERSION from $node_dir's headers"
  version=$(sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$bs3/package.json" | head -n 1)
  cached="$RUNTIME_CACHE/addons/better-sqlite3-$version-abi$abi-linux-$arch.node"
  if [ -f "$cached" ]; then
    if runtime_check_addon "$arch" "$node_dir" "$bs3" "$cached" >&2; then printf '%s\n' "$cached"; return 0; fi
    runtime_log "the cached $cached does not load with the runtime: discarding it and compiling again"
    rm -f "$cached"
  fi
  { [ -f "$bs3/binding.gyp" ] && [ -d "$bs3/deps" ] && [ -d "$bs3/src" ]; } || runtime_die "$bs3 has no sources to compile (binding.gyp, deps/, src/)"
  local gyp target host_node
  target=$(runtime_version)
  host_node=$(command -v node)
  gyp=$(node -p "require.resolve('node-gyp/bin/node-gyp.js', { paths: [require('path').join(require('path').dirname(process.execPath), '../lib/node_modules/npm'), process.cwd()] })") || runtime_die "node-gyp not found (it comes with npm)"
  work=$(mktemp -d)
  cp -r "$bs3/binding.gyp" "$bs3/deps" "$bs3/src" "$bs3/package.json" "$work/"
  log="$work/gyp.log"
  runtime_log "compiling better-sqlite3 $version for node $target linux-$arch (ABI $abi) against $node_dir/include"
  local cross=()
  if [ "$arch" != "$(runtime_host_arch)" ]; then
    [ "$arch" = arm64 ] || runtime_die "cannot cross-compile for $arch"
    command -v aarch64-linux-gnu-g++ >/dev/null || runtime_die "aarch64-linux-gnu-g++ is missing (apt-get install g++-aarch64-linux-gnu)"
    cross=(CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ LINK=aarch64-linux-gnu-g++ AR=aarch64-linux-gnu-ar CC_host=gcc CXX_host=g++ LINK_host=g++)
  fi
  # A clean environment: no npm_config_nodedir (or any npm_config_*), no ~/.npmrc, no
  # ~/.cache/node-gyp headers: only this runtime's headers, named explicitly.
  (cd "$work" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$work" "${cross[@]}" \
    "$host_node" "$gyp" rebuild --release --nodedir="$node_dir" --target="$target" --arch="$arch" --jobs=max >"$log" 2>&1) ||
    { tail -40 "$log" >&2; rm -rf "$work"; runtime_die "compiling better-sqlite3 failed"; }
  runtime_check_addon "$arch" "$node_dir" "$bs3" "$work/build/Release/better_sqlite3.node" >&2 ||
    { rm -rf "$work"; runtime_die "the addon just compiled does not load with the runtime: not cached"; }
  mkdir -p "$(dirname "$cached")"
  cp "$work/build/Release/better_sqlite3.node" "$cached.tmp.$$" && mv "$cached.tmp.$$" "$cached"
  rm -rf "$work"
  printf '%s\n' "$cached"
}
