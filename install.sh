#!/bin/sh
# Placard server installer (Debian 12+, Ubuntu 22.04+, Raspberry Pi OS; x86_64, aarch64).
#
# Run as root from an unpacked release package (placard-<version>-linux-<arch>/install.sh),
# or give the package: install.sh --package placard-<version>-linux-<arch>.tar.gz
#
#   install.sh                 install (or reinstall) and start the service
#   install.sh --upgrade       install a new version beside the old one, back up first, switch, restart
#   install.sh --rollback      point /opt/placard/current back at the previous version, restart
#   install.sh --rollback --restore-backup   ... and restore the backup taken before the upgrade
#                              (needed when the newer version migrated the database)
#   install.sh --uninstall     remove the service and the program; keep data and config
#   install.sh --uninstall --purge   ... and delete /var/lib/placard, /etc/placard and the user
#
# Options: --root DIR (install into DIR as if it were /: nothing outside DIR is touched, no
# services are started; used by CI; works without root), --port N (below 1024 the unit gets
# CAP_NET_BIND_SERVICE), --public-url URL, --backup-copy-dir DIR (a mounted NAS or USB
# drive: every backup is copied there), --no-start, --no-deps.
# The package's files are checked against its SHA256SUMS before anything is installed.
# Idempotent: running it again changes nothing that is already right (and does not restart
# a running service); data is never deleted without --purge.
set -eu

ROOT=""
MODE=install
PURGE=0
START=1
DEPS=1
PACKAGE=""
PORT=""
PUBLIC_URL=""
BACKUP_COPY_DIR=""
RESTORE_BACKUP=0
# Seconds to wait for /readyz after a (re)start: as long as the unit's own readiness check
# (ExecStartPost wait-ready --timeout 150, inside TimeoutStartSec=180).
READY_TIMEOUT=150
# Tests drive a fake systemctl, also with --root (never set this on a real machine).
FAKE_SYSTEMCTL=${PLACARD_INSTALL_SYSTEMCTL:-}

say() { printf 'placard-install: %s\n' "$*"; }
die() { printf 'placard-install: error: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
  exit "${1:-0}"
}

while [ $# -gt 0 ]; do
  case "$1" in
    --root) [ $# -ge 2 ] || die "--root needs a directory"; ROOT=$2; shift 2 ;;
    --root=*) ROOT=${1#--root=}; shift ;;
    --upgrade) MODE=upgrade; shift ;;
    --rollback) MODE=rollback; shift ;;
    --restore-backup) RESTORE_BACKUP=1; shift ;;
    --uninstall) MODE=uninstall; shift ;;
    --purge) PURGE=1; shift ;;
    --no-start) START=0; shift ;;
    --no-deps) DEPS=0; shift ;;
    --package) [ $# -ge 2 ] || die "--package needs a file"; PACKAGE=$2; shift 2 ;;
    --package=*) PACKAGE=${1#--package=}; shift ;;
    --port) [ $# -ge 2 ] || die "--port needs a number"; PORT=$2; shift 2 ;;
    --port=*) PORT=${1#--port=}; shift ;;
    --public-url) [ $# -ge 2 ] || die "--public-url needs a URL"; PUBLIC_URL=$2; shift 2 ;;
    --public-url=*) PUBLIC_URL=${1#--public-url=}; shift ;;
    --backup-copy-dir) [ $# -ge 2 ] || die "--backup-copy-dir needs a directory"; BACKUP_COPY_DIR=$2; shift 2 ;;
    --backup-copy-dir=*) BACKUP_COPY_DIR=${1#--backup-copy-dir=}; shift ;;
    -h|--help) usage 0 ;;
    *) printf 'placard-install: unknown option %s\n\n' "$1" >&2; usage 2 ;;
  esac
done

if [ "$PURGE" = 1 ] && [ "$MODE" != uninstall ]; then die "--purge goes with --uninstall"; fi
if [ "$RESTORE_BACKUP" = 1 ] && [ "$MODE" != rollback ]; then die "--restore-backup goes with --rollback"; fi
case "$PORT" in ''|*[!0-9]*) [ -z "$PORT" ] || die "--port must be a number" ;; esac
if [ -n "$PORT" ] && { [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; }; then die "--port must be 1-65535"; fi
case "$PUBLIC_URL" in ''|http://*|https://*) ;; *) die "--public-url must start with http:// or https://" ;; esac
case "$BACKUP_COPY_DIR" in ''|/*) ;; *) die "--backup-copy-dir must be an absolute path (the mount point of a NAS or USB drive)" ;; esac
case "$BACKUP_COPY_DIR" in *[!A-Za-z0-9/._-]*) die "--backup-copy-dir: use a path of letters, digits and / . _ - only" ;; esac

if [ -n "$ROOT" ]; then
  mkdir -p "$ROOT" || die "cannot create $ROOT"
  ROOT=$(cd "$ROOT" && pwd)
  if [ -z "$FAKE_SYSTEMCTL" ]; then START=0; fi
  DEPS=0
  say "installing into $ROOT (no services are started, nothing outside it is touched)"
elif [ "$(id -u)" != 0 ]; then
  die "run as root (sudo sh install.sh ...), or use --root DIR"
fi

OPT="$ROOT/opt/placard"
DATA="$ROOT/var/lib/placard"
ETC="$ROOT/etc/placard"
UNIT_DIR="$ROOT/etc/systemd/system"
BIN="$ROOT/usr/local/bin/placard"
SERVICE_USER=placard

have() { command -v "$1" >/dev/null 2>&1; }
systemd_running() {
  if [ -n "$FAKE_SYSTEMCTL" ]; then return 0; fi
  [ -z "$ROOT" ] && [ -d /run/systemd/system ] && have systemctl
}
sysctl() {
  if [ -n "$FAKE_SYSTEMCTL" ]; then "$FAKE_SYSTEMCTL" "$@"; else systemctl "$@"; fi
}

# Set when this run changed something the running service uses (program, unit, config, link).
CHANGED=0
UNIT_CHANGED=0
# Not root (a --root install by a normal user): files stay owned by whoever runs this.
CHOWN_SKIPPED=0

# ---------------------------------------------------------------- the service user

user_uid() {
  # uid of the service user in the target's /etc/passwd, or nothing
  [ -f "$ROOT/etc/passwd" ] || return 0
  awk -F: -v u="$SERVICE_USER" '$1 == u { print $3 }' "$ROOT/etc/passwd"
}

ensure_user() {
  if [ -n "$(user_uid)" ]; then return 0; fi
  if [ -z "$ROOT" ]; then
    if have useradd; then
      useradd --system --user-group --home-dir /var/lib/placard --no-create-home --shell /usr/sbin/nologin --comment "Placard signage server" "$SERVICE_USER"
    elif have adduser; then
      adduser --system --group --home /var/lib/placard --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"
    else
      die "neither useradd nor adduser is available to create the $SERVICE_USER user"
    fi
  else
    # A scratch root: write the entries the way useradd --system would.
    mkdir -p "$ROOT/etc"
    touch "$ROOT/etc/passwd" "$ROOT/etc/group"
    uid=999
    while awk -F: -v id="$uid" '$3 == id { found = 1 } END { exit !found }' "$ROOT/etc/passwd" "$ROOT/etc/group"; do
      uid=$((uid - 1))
    done
    printf '%s:x:%s:%s:Placard signage server:/var/lib/placard:/usr/sbin/nologin\n' "$SERVICE_USER" "$uid" "$uid" >>"$ROOT/etc/passwd"
    printf '%s:x:%s:\n' "$SERVICE_USER" "$uid" >>"$ROOT/etc/group"
    if [ -f "$ROOT/etc/shadow" ]; then printf '%s:!:::::::\n' "$SERVICE_USER" >>"$ROOT/etc/shadow"; fi
  fi
  say "created the $SERVICE_USER system user"
}

try_chown() {
  # chown as asked; without root (only possible with --root) the files stay the caller's.
  if [ "$(id -u)" = 0 ]; then
    chown "$@"
  elif ! chown "$@" 2>/dev/null; then
    CHOWN_SKIPPED=1
  fi
}

chown_service() {
  # chown to the service user by number (works in a scratch root too)
  uid=$(user_uid)
  gid=$(awk -F: -v u="$SERVICE_USER" '$1 == u { print $4 }' "$ROOT/etc/passwd")
  [ -n "$uid" ] || return 0
  try_chown -R "$uid:$gid" "$@"
}

# ---------------------------------------------------------------- the release package

SOURCE=""
TMP_UNPACK=""
cleanup() { if [ -n "$TMP_UNPACK" ]; then rm -rf "$TMP_UNPACK"; fi; }
trap cleanup EXIT INT TERM

find_package() {
  if [ -n "$PACKAGE" ]; then
    [ -f "$PACKAGE" ] || die "no such package: $PACKAGE"
    if [ -f "$PACKAGE.sha256" ] && have sha256sum; then
      (cd "$(dirname "$PACKAGE")" && sha256sum -c "$(basename "$PACKAGE").sha256" >/dev/null) || die "$PACKAGE does not match $PACKAGE.sha256"
      say "checksum of $(basename "$PACKAGE") verified"
    fi
    TMP_UNPACK=$(mktemp -d) || die "cannot make a temporary directory to unpack into (set TMPDIR to a writable one)"
    tar -xzf "$PACKAGE" -C "$TMP_UNPACK" || die "cannot unpack $PACKAGE"
    SOURCE=$(find "$TMP_UNPACK" -mindepth 1 -maxdepth 1 -type d | head -n 1)
  else
    SOURCE=$(cd "$(dirname "$0")" && pwd)
  fi
  if [ ! -x "$SOURCE/node/bin/node" ] || [ ! -f "$SOURCE/dist/server/src/main.js" ]; then
    die "$SOURCE is not an unpacked release package (no node/bin/node or dist/). Build one with 'npm run package', or pass --package FILE.tar.gz"
  fi
  verify_package
  VERSION=$(sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$SOURCE/package.json" | head -n 1)
  [ -n "$VERSION" ] || die "cannot read the version from $SOURCE/package.json"
  PKG_ARCH=$(cat "$SOURCE/ARCH" 2>/dev/null || echo unknown)
}

# Every file of the package matches its SHA256SUMS, and there is no file it does not list
# (install.sh's own markers in an installed copy aside). The tarball's .sha256, checked
# above when it is beside it, vouches for SHA256SUMS itself.
verify_package() {
  [ -f "$SOURCE/SHA256SUMS" ] || die "$SOURCE has no SHA256SUMS: not a complete release package"
  have sha256sum || die "sha256sum is needed to verify the package (coreutils)"
  if ! bad=$(cd "$SOURCE" && sha256sum -c --quiet --strict SHA256SUMS 2>&1); then
    die "the package's files do not match its SHA256SUMS (damaged or tampered; nothing was installed): $(printf '%s\n' "$bad" | head -n 3 | tr '\n' ' ')"
  fi
  # No temporary files: install.sh may run as a user who cannot write $TMPDIR (--root).
  extra=$(cd "$SOURCE" && { sed -n 's/^[0-9a-f]\{64\}  /L /p' SHA256SUMS; find . -type f ! -path ./SHA256SUMS ! -path ./.installed ! -path ./.schema-before-upgrade | sed 's/^/F /'; } |
    awk '$1 == "L" { listed[substr($0, 3)] = 1; next } !(substr($0, 3) in listed) { print substr($0, 3) }' | head -n 3 | tr '\n' ' ')
  n=$(grep -c '^[0-9a-f]\{64\}  ' "$SOURCE/SHA256SUMS")
  [ -z "$extra" ] || die "the package holds files its SHA256SUMS does not list (tampered; nothing was installed): $extra"
  say "verified the package's $n files against its SHA256SUMS"
}

check_platform() {
  case "$(uname -m)" in
    x86_64|amd64) host_arch=x64 ;;
    aarch64|arm64) host_arch=arm64 ;;
    *) host_arch=$(uname -m) ;;
  esac
  if [ -z "$ROOT" ] && [ "$PKG_ARCH" != unknown ] && [ "$PKG_ARCH" != "$host_arch" ]; then
    die "this package is for $PKG_ARCH but this machine is $host_arch"
  fi
  if [ -z "$ROOT" ] && [ -r /etc/os-release ]; then
    # shellcheck disable=SC1091
    . /etc/os-release
    case "${ID:-}" in
      debian|raspbian|ubuntu) ;;
      *) say "warning: ${PRETTY_NAME:-this system} is not Debian, Ubuntu or Raspberry Pi OS; carrying on" ;;
    esac
  fi
}

install_deps() {
  [ "$DEPS" = 1 ] || return 0
  if have apt-get; then
    if ! have ffmpeg || ! have ffprobe; then
      say "installing the distribution's ffmpeg"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ffmpeg >/dev/null ||
        { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ffmpeg >/dev/null; } ||
        say "warning: could not install ffmpeg; the server uses the copy in its package"
    fi
    if ! have pdftoppm || ! have pdfinfo; then
      say "installing poppler-utils (PDF assets)"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends poppler-utils >/dev/null ||
        { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends poppler-utils >/dev/null; } ||
        say "warning: could not install poppler-utils; PDF uploads are refused until it is installed"
    fi
  fi
}

install_program() {
  target="$OPT/$VERSION"
  # The same files (SHA256SUMS), not the same version string: a rebuilt package of the same
  # version replaces the installed copy.
  if [ -d "$target" ] && [ -f "$target/.installed" ] && cmp -s "$SOURCE/SHA256SUMS" "$target/SHA256SUMS" && [ "$SOURCE" != "$target" ]; then
    say "version $VERSION already in $target (same files)"
  elif [ "$SOURCE" = "$target" ]; then
    say "running from $target itself"
  else
    if [ -f "$target/.installed" ]; then say "version $VERSION in $target differs from this package (a rebuild): replacing it"; fi
    mkdir -p "$OPT"
    rm -rf "$target.partial"
    cp -a "$SOURCE" "$target.partial"
    rm -f "$target.partial/.installed"
    if [ -f "$target/.schema-before-upgrade" ]; then cp "$target/.schema-before-upgrade" "$target.partial/"; fi
    touch "$target.partial/.installed"
    rm -rf "$target"
    mv "$target.partial" "$target"
    CHANGED=1
    say "installed version $VERSION in $target"
  fi
  chown -R 0:0 "$target" 2>/dev/null || true
  chmod -R go-w "$target"
}

switch_current() {
  new=$1
  if [ -L "$OPT/current" ]; then
    old=$(readlink "$OPT/current")
    if [ "$old" != "$new" ]; then ln -sfn "$old" "$OPT/previous"; fi
  fi
  if [ "$(readlink "$OPT/current" 2>/dev/null || true)" = "$new" ]; then return 0; fi
  ln -sfn "$new" "$OPT/current.new"
  mv -T "$OPT/current.new" "$OPT/current" 2>/dev/null || { rm -f "$OPT/current"; mv "$OPT/current.new" "$OPT/current"; }
  CHANGED=1
}

write_config() {
  mkdir -p "$ETC"
  env_file="$ETC/placard.env"
  if [ ! -f "$env_file" ]; then
    if [ -n "$PUBLIC_URL" ]; then url_line="PLACARD_PUBLIC_URL=$PUBLIC_URL"; else url_line="#PLACARD_PUBLIC_URL=http://signage.example.lan:8080"; fi
    cat >"$env_file" <<EOF
# Placard server configuration, read by placard.service. Restart after a change:
#   systemctl restart placard
# Every variable is described in /opt/placard/current/README.md.
PLACARD_PORT=${PORT:-8080}
PLACARD_HOST=0.0.0.0
PLACARD_DATA_DIR=/var/lib/placard
# The URL screens and installers use to reach this server (http://<name or address>:<port>).
$url_line
# HTTPS with a certificate made in /var/lib/placard/tls at first start; screens pin its key
# (docs/trust.md). 0 turns it off. Your own certificate instead (readable by the placard
# user, e.g. in /etc/placard): PLACARD_TLS_CERT and PLACARD_TLS_KEY.
PLACARD_HTTPS_PORT=8443
#PLACARD_TLS_CERT=/etc/placard/tls/fullchain.pem
#PLACARD_TLS_KEY=/etc/placard/tls/privkey.pem
# Send people who open the console over http:// to https:// (players and installers stay).
#PLACARD_HTTPS_REDIRECT=true
PLACARD_LOG_LEVEL=info
EOF
    CHANGED=1
    say "wrote $env_file"
  else
    # Keep the admin's file; apply only what was asked for on the command line.
    if [ -n "$PORT" ]; then set_env PLACARD_PORT "$PORT"; fi
    if [ -n "$PUBLIC_URL" ]; then set_env PLACARD_PUBLIC_URL "$PUBLIC_URL"; fi
    say "kept $env_file"
  fi
  # The distribution's maintained ffmpeg (install_deps installs it) rather than the build in
  # the package; an admin's own PLACARD_FFMPEG/PLACARD_FFPROBE line is kept.
  if [ -x "$ROOT/usr/bin/ffmpeg" ] && [ -x "$ROOT/usr/bin/ffprobe" ]; then
    if ! grep -q '^PLACARD_FFMPEG=' "$env_file"; then set_env PLACARD_FFMPEG /usr/bin/ffmpeg; fi
    if ! grep -q '^PLACARD_FFPROBE=' "$env_file"; then set_env PLACARD_FFPROBE /usr/bin/ffprobe; fi
  fi
  if [ -n "$BACKUP_COPY_DIR" ]; then set_env PLACARD_BACKUP_COPY_DIR "$BACKUP_COPY_DIR"; fi
  chmod 0640 "$env_file"
  gid=$(awk -F: -v u="$SERVICE_USER" '$1 == u { print $4 }' "$ROOT/etc/passwd" 2>/dev/null)
  if [ -n "$gid" ]; then try_chown "0:$gid" "$env_file" "$ETC"; fi
  chmod 0750 "$ETC"
}

set_env() {
  key=$1 value=$2 file="$ETC/placard.env"
  if [ "$(sed -n "s/^$key=//p" "$file" | tail -n 1)" = "$value" ]; then return 0; fi
  CHANGED=1
  if grep -q "^#\{0,1\}$key=" "$file"; then
    tmp="$file.tmp"
    awk -v k="$key" -v v="$value" 'BEGIN { done = 0 } $0 ~ "^#?" k "=" { if (!done) { print k "=" v; done = 1 }; next } { print }' "$file" >"$tmp"
    mv "$tmp" "$file"
  else
    printf '%s=%s\n' "$key" "$value" >>"$file"
  fi
}

make_data_dir() {
  mkdir -p "$DATA"
  for d in media uploads backups releases; do mkdir -p "$DATA/$d"; done
  chown_service "$DATA"
  chmod 0750 "$DATA"
}

install_unit() {
  mkdir -p "$UNIT_DIR"
  unit_src="$OPT/current/systemd/placard.service"
  if ! cmp -s "$unit_src" "$UNIT_DIR/placard.service" 2>/dev/null; then
    cp "$unit_src" "$UNIT_DIR/placard.service"
    chmod 0644 "$UNIT_DIR/placard.service"
    CHANGED=1
    UNIT_CHANGED=1
    say "installed $UNIT_DIR/placard.service"
  fi
  mkdir -p "$UNIT_DIR/multi-user.target.wants"
  ln -sfn /etc/systemd/system/placard.service "$UNIT_DIR/multi-user.target.wants/placard.service"
}

# The unit's drop-in for what placard.env asks of it: CAP_NET_BIND_SERVICE for a port below
# 1024 (and nothing else: the bounding set holds only that capability), write access to the
# backup copy directory (ProtectSystem=strict makes the rest of the system read-only).
# Without either, no drop-in.
install_dropin() {
  dropin_dir="$UNIT_DIR/placard.service.d"
  dropin="$dropin_dir/install.conf"
  port=$(sed -n 's/^PLACARD_PORT=\([0-9]*\).*/\1/p' "$ETC/placard.env" | tail -n 1)
  copy_dir=$(sed -n 's/^PLACARD_BACKUP_COPY_DIR=\(.*\)$/\1/p' "$ETC/placard.env" | tail -n 1)
  body=""
  if [ -n "$port" ] && [ "$port" -lt 1024 ]; then
    body="# PLACARD_PORT=$port is below 1024: binding it needs this one capability.
CapabilityBoundingSet=CAP_NET_BIND_SERVICE
AmbientCapabilities=CAP_NET_BIND_SERVICE
"
  fi
  if [ -n "$copy_dir" ]; then
    body="$body# Backups are copied to PLACARD_BACKUP_COPY_DIR (- : not an error while it is not mounted).
ReadWritePaths=-$copy_dir
"
  fi
  if [ -z "$body" ]; then
    if [ -f "$dropin" ]; then
      rm -f "$dropin"
      rmdir "$dropin_dir" 2>/dev/null || true
      CHANGED=1
      UNIT_CHANGED=1
      say "removed $dropin"
    fi
    return 0
  fi
  mkdir -p "$dropin_dir"
  printf '# Written by install.sh from /etc/placard/placard.env; run install.sh again after changing it.\n[Service]\n%s' "$body" >"$dropin.new"
  if cmp -s "$dropin.new" "$dropin"; then rm -f "$dropin.new"; return 0; fi
  mv "$dropin.new" "$dropin"
  chmod 0644 "$dropin"
  CHANGED=1
  UNIT_CHANGED=1
  say "installed $dropin"
}

# --backup-copy-dir: a directory on another disk (a NAS or USB drive mounted there). The
# marker file tells the server the drive is mounted: without it (an empty mount point)
# backups are not copied onto the system disk by mistake.
prepare_backup_copy_dir() {
  [ -n "$BACKUP_COPY_DIR" ] || return 0
  dir="$ROOT$BACKUP_COPY_DIR"
  [ -d "$dir" ] || die "--backup-copy-dir $BACKUP_COPY_DIR does not exist: mount the NAS or USB drive there first"
  if [ "$(stat -L -c %d "$dir")" = "$(stat -L -c %d "$DATA")" ]; then
    die "--backup-copy-dir $BACKUP_COPY_DIR is on the same disk as $DATA: mount the NAS or USB drive there first (a copy on the same disk is lost with it)"
  fi
  if [ ! -f "$dir/.placard-backup-target" ]; then
    printf 'Placard copies its backups here (install.sh --backup-copy-dir). Keep this file: without it the server takes the directory for an empty mount point.\n' >"$dir/.placard-backup-target"
  fi
  chown_service "$dir/."
  chmod 0750 "$dir"
  say "backups will be copied to $BACKUP_COPY_DIR"
}

install_cli() {
  mkdir -p "$(dirname "$BIN")"
  cat >"$BIN.new" <<'EOF'
#!/bin/sh
# placard: the server's command line (backup, restore, migrate, reset-password, status).
# Runs as the placard user with the service's configuration.
set -eu
if [ -r /etc/placard/placard.env ]; then
  set -a
  # shellcheck disable=SC1091
  . /etc/placard/placard.env
  set +a
fi
export PLACARD_DATA_DIR="${PLACARD_DATA_DIR:-/var/lib/placard}"
node=/opt/placard/current/node/bin/node
cli=/opt/placard/current/dist/server/src/cli.js
if [ "$(id -u)" = 0 ] && id placard >/dev/null 2>&1; then
  exec setpriv --reuid=placard --regid=placard --init-groups env PLACARD_DATA_DIR="$PLACARD_DATA_DIR" "$node" "$cli" "$@"
fi
exec "$node" "$cli" "$@"
EOF
  chmod 0755 "$BIN.new"
  if cmp -s "$BIN.new" "$BIN"; then rm -f "$BIN.new"; else mv "$BIN.new" "$BIN"; CHANGED=1; fi
}

systemctl_do() {
  if systemd_running; then sysctl "$@"; fi
}

# The placard command of one installed version (not necessarily current), run the way
# /usr/local/bin/placard runs it: the service's configuration, as the placard user.
cli_of() {
  v=$1
  shift
  node="$OPT/$v/node/bin/node"
  cli="$OPT/$v/dist/server/src/cli.js"
  if [ -n "$ROOT" ]; then
    PLACARD_DATA_DIR="$DATA" "$node" "$cli" "$@"
    return
  fi
  (
    if [ -r "$ETC/placard.env" ]; then
      set -a
      # shellcheck disable=SC1091
      . "$ETC/placard.env"
      set +a
    fi
    PLACARD_DATA_DIR="${PLACARD_DATA_DIR:-/var/lib/placard}"
    export PLACARD_DATA_DIR
    if [ "$(id -u)" = 0 ] && id "$SERVICE_USER" >/dev/null 2>&1; then
      exec setpriv --reuid="$SERVICE_USER" --regid="$SERVICE_USER" --init-groups "$node" "$cli" "$@"
    fi
    exec "$node" "$cli" "$@"
  )
}

wait_ready() {
  # The new version's own check: placard wait-ready, on the port in placard.env.
  port=$(sed -n 's/^PLACARD_PORT=\([0-9]*\).*/\1/p' "$ETC/placard.env" | tail -n 1)
  (
    PLACARD_PORT=${port:-8080}
    PLACARD_HOST=127.0.0.1
    export PLACARD_PORT PLACARD_HOST
    cli_of "$(readlink "$OPT/current")" wait-ready --timeout "$READY_TIMEOUT"
  )
}

# Can version $1 open the database? 0: yes (or there is none), 3: it is newer than $1
# knows (a newer version migrated it), anything else: cannot tell.
schema_status() {
  [ -f "$DATA/placard.db" ] || return 0
  rc=0
  cli_of "$1" schema >/dev/null 2>&1 || rc=$?
  return "$rc"
}

# The database's schema version as version $1's command reads it (empty when it cannot).
db_schema_with() {
  [ -f "$DATA/placard.db" ] || return 0
  cli_of "$1" schema 2>/dev/null | sed -n 's/^database schema \([0-9][0-9]*\).*/\1/p' | head -n 1
}

# Must going back from version $2 to version $1 restore the pre-upgrade backup? 0: yes
# (WHY says why), 1: no, the database is one $1 opens. When $1 cannot tell (a version
# without `placard schema`), the schema $2 found before it started (recorded at its
# upgrade) is compared with the schema now: unchanged means $2 migrated nothing.
rollback_needs_restore() {
  rc=0
  schema_status "$1" || rc=$?
  case "$rc" in
    0) return 1 ;;
    3) WHY="version $2 migrated the database and $1 cannot open it"; return 0 ;;
  esac
  before=$(cat "$OPT/$2/.schema-before-upgrade" 2>/dev/null || true)
  now=$(db_schema_with "$2")
  if [ -n "$before" ] && [ "$before" = "$now" ]; then return 1; fi
  WHY="cannot tell whether $1 can open the database (placard schema: $rc; schema before the upgrade: ${before:-unknown}, now: ${now:-unknown})"
  return 0
}

# After the current link moved back: the unit of the version now current, reloaded.
restore_unit() {
  UNIT_CHANGED=0
  install_unit
  if [ "$UNIT_CHANGED" = 1 ]; then systemctl_do daemon-reload || true; fi
}

newest_pre_upgrade_backup() {
  # Names sort by time (placard-backup-<UTC stamp>-pre-upgrade-xxxx.tar[.age]).
  for f in "$DATA"/backups/placard-backup-*-pre-upgrade-*.tar "$DATA"/backups/placard-backup-*-pre-upgrade-*.tar.age; do
    if [ -f "$f" ]; then printf '%s\n' "$f"; fi
  done | sort | tail -n 1
}

# Puts a backup back with version $1's command: never under a running server (the service
# is stopped first and must stay stopped), as the service user, and every file of the data
# directory owned by it afterwards.
restore_with() {
  if systemd_running && sysctl is-active --quiet placard.service; then
    sysctl stop placard.service || true
    if sysctl is-active --quiet placard.service; then
      say "placard.service is still running: not restoring under it"
      return 1
    fi
  fi
  say "restoring $2 with version $1"
  cli_of "$1" restore "$2" --force || return 1
  uid=$(user_uid)
  if [ -n "$uid" ]; then
    chown_service "$DATA"
    stray=$(find "$DATA" ! -uid "$uid" 2>/dev/null | head -n 3)
    if [ -n "$stray" ] && [ "$CHOWN_SKIPPED" = 0 ]; then say "warning: files in $DATA not owned by $SERVICE_USER: $stray"; fi
  fi
}

print_url() {
  url=$(sed -n 's/^PLACARD_PUBLIC_URL=\(.*\)$/\1/p' "$ETC/placard.env" | tail -n 1)
  if [ -z "$url" ]; then
    port=$(sed -n 's/^PLACARD_PORT=\([0-9]*\).*/\1/p' "$ETC/placard.env" | tail -n 1)
    addr=$(hostname -I 2>/dev/null | awk '{ print $1 }')
    url="http://${addr:-$(hostname)}:${port:-8080}"
  fi
  say "Placard $VERSION is installed. Open the console: $url"
  https_port=$(sed -n 's/^PLACARD_HTTPS_PORT=\([0-9]*\).*/\1/p' "$ETC/placard.env" | tail -n 1)
  if [ "${https_port:-8443}" != 0 ]; then
    say "Screens: the console shows the install line with this server's HTTPS key pinned (Screens > Add screen); placard tls prints the key's fingerprint"
  else
    say "Screens install the player with: curl -fsSL $url/install.sh | sudo sh (unprotected: HTTPS is off, PLACARD_HTTPS_PORT=0)"
  fi
}

UPGRADE_BACKUP=""
backup_before_upgrade() {
  # With the installed (old) version's command: it knows the database as it is.
  old=$1
  if [ ! -f "$DATA/placard.db" ] || [ -z "$old" ] || [ ! -x "$OPT/$old/node/bin/node" ]; then return 0; fi
  say "backing up before the upgrade (placard backup --kind pre-upgrade of version $old)"
  UPGRADE_BACKUP=$(cli_of "$old" backup --kind pre-upgrade) || die "the backup before the upgrade failed; nothing was changed"
  UPGRADE_BACKUP=$(printf '%s\n' "$UPGRADE_BACKUP" | tail -n 1)
  [ -f "$UPGRADE_BACKUP" ] || die "the backup before the upgrade did not name its file ($UPGRADE_BACKUP); nothing was changed"
  say "backup: $UPGRADE_BACKUP"
}

# The new version did not become ready: put the one before back (and the pre-upgrade
# backup, when the new version migrated the database), start it, and stop with an error.
roll_back_failed_upgrade() {
  was=$1
  prev_before=$2
  say "version $VERSION did not become ready; rolling back to $was"
  sysctl stop placard.service || say "warning: could not stop placard.service"
  switch_current "$was"
  if [ -n "$prev_before" ]; then ln -sfn "$prev_before" "$OPT/previous"; else rm -f "$OPT/previous"; fi
  restore_unit
  WHY=""
  if rollback_needs_restore "$was" "$VERSION"; then
    say "$WHY"
    if [ -n "$UPGRADE_BACKUP" ]; then
      restore_with "$was" "$UPGRADE_BACKUP" || die "restoring $UPGRADE_BACKUP failed; restore it by hand (placard restore FILE) before starting $was"
    else
      die "there is no backup from before the upgrade to restore; restore a backup made by $was (placard restore FILE) before starting it"
    fi
  fi
  if sysctl start placard.service && wait_ready; then
    say "version $was is running again"
  else
    say "warning: version $was did not become ready either"
  fi
  die "version $VERSION did not become ready (see: journalctl -u placard -n 50); rolled back to $was"
}

# ---------------------------------------------------------------- modes

do_install() {
  find_package
  check_platform
  was=""
  if [ -L "$OPT/current" ]; then was=$(readlink "$OPT/current"); fi
  prev_before=$(readlink "$OPT/previous" 2>/dev/null || true)
  if [ "$MODE" = upgrade ] && [ -z "$was" ]; then
    say "no installed version found: installing"
  elif [ "$MODE" = install ] && [ -n "$was" ] && [ "$was" != "$VERSION" ]; then
    say "version $was is installed: upgrading it to $VERSION"
    MODE=upgrade
  fi
  install_deps
  ensure_user
  if [ "$MODE" = upgrade ] && [ "$was" != "$VERSION" ]; then backup_before_upgrade "$was"; fi
  install_program
  switch_current "$VERSION"
  # What the database is before the new version starts (and may migrate it): a rollback
  # compares with it when the version before cannot tell whether it can open the database.
  if [ "$MODE" = upgrade ] && [ "$was" != "$VERSION" ]; then db_schema_with "$VERSION" >"$OPT/$VERSION/.schema-before-upgrade" || true; fi
  write_config
  make_data_dir
  prepare_backup_copy_dir
  install_unit
  install_dropin
  install_cli
  if [ "$CHOWN_SKIPPED" = 1 ]; then
    say "not root: the files are owned by $(id -un), not by $SERVICE_USER (run as root for a real install)"
  fi
  if [ "$START" = 1 ] && systemd_running; then
    if [ "$UNIT_CHANGED" = 1 ]; then sysctl daemon-reload; fi
    sysctl enable placard.service >/dev/null 2>&1 || true
    # A failed restart (the unit's readiness check failed) must lead to the rollback, not
    # end the script under set -e: it is tested as a condition.
    if [ "$CHANGED" = 0 ] && sysctl is-active --quiet placard.service; then
      say "nothing changed; placard.service keeps running"
      print_url
    elif sysctl restart placard.service && wait_ready; then
      print_url
    elif [ -n "$was" ] && [ "$was" != "$VERSION" ] && [ -d "$OPT/$was" ]; then
      roll_back_failed_upgrade "$was" "$prev_before"
    else
      die "the server did not become ready; see: journalctl -u placard -n 50"
    fi
  else
    say "installed; not started (start it with: systemctl enable --now placard)"
    print_url
  fi
  # Keep the current and previous versions; older ones go.
  for d in "$OPT"/*/; do
    v=$(basename "$d")
    case "$v" in current|previous) continue ;; esac
    cur=$(readlink "$OPT/current" 2>/dev/null || true)
    prev=$(readlink "$OPT/previous" 2>/dev/null || true)
    if [ "$v" != "$cur" ] && [ "$v" != "$prev" ] && [ -f "$d/.installed" ]; then rm -rf "$d"; fi
  done
}

do_rollback() {
  [ -L "$OPT/previous" ] || die "there is no previous version to roll back to"
  prev=$(readlink "$OPT/previous")
  cur=$(readlink "$OPT/current" 2>/dev/null || true)
  [ -d "$OPT/$prev" ] || die "the previous version ($prev) is no longer installed"
  # Can the previous version open the database? Not when the newer one migrated it.
  backup=""
  WHY=""
  if rollback_needs_restore "$prev" "${cur:-current}"; then
    why=$WHY
    backup=$(newest_pre_upgrade_backup)
    [ -n "$backup" ] || die "$why, and there is no pre-upgrade backup in $DATA/backups. Nothing was changed"
    if [ "$RESTORE_BACKUP" != 1 ]; then
      die "$why. Rolling back means restoring the backup taken before the upgrade, $backup (what changed since is lost): run install.sh --rollback --restore-backup. Nothing was changed"
    fi
  fi
  systemctl_do stop placard.service || true
  switch_current "$prev"
  if [ -n "$cur" ]; then ln -sfn "$cur" "$OPT/previous"; fi
  restore_unit
  if [ -n "$backup" ] && ! restore_with "$prev" "$backup"; then
    switch_current "$cur"
    ln -sfn "$prev" "$OPT/previous"
    restore_unit
    systemctl_do start placard.service || true
    die "restoring $backup failed; version $cur is current again"
  fi
  say "current version is now $prev"
  if [ "$START" = 1 ] && systemd_running; then
    if sysctl start placard.service && wait_ready; then say "placard.service is running"; else die "version $prev did not become ready; see: journalctl -u placard -n 50"; fi
  fi
}

do_uninstall() {
  systemctl_do disable --now placard.service || true
  rm -f "$UNIT_DIR/placard.service" "$UNIT_DIR/multi-user.target.wants/placard.service"
  systemctl_do daemon-reload || true
  rm -rf "$OPT" "$BIN"
  say "removed the program and the service"
  if [ "$PURGE" = 1 ]; then
    rm -rf "$DATA" "$ETC"
    if [ -n "$(user_uid)" ]; then
      if [ -z "$ROOT" ] && have userdel; then
        userdel "$SERVICE_USER" 2>/dev/null || true
      else
        for f in passwd group shadow; do
          if [ -f "$ROOT/etc/$f" ]; then
            awk -F: -v u="$SERVICE_USER" '$1 != u' "$ROOT/etc/$f" >"$ROOT/etc/$f.tmp" && cat "$ROOT/etc/$f.tmp" >"$ROOT/etc/$f" && rm -f "$ROOT/etc/$f.tmp"
          fi
        done
      fi
    fi
    say "purged the data (/var/lib/placard), the configuration (/etc/placard) and the user"
  else
    say "kept the data in /var/lib/placard and the configuration in /etc/placard (--purge deletes them)"
  fi
}

case "$MODE" in
  install|upgrade) do_install ;;
  rollback) do_rollback ;;
  uninstall) do_uninstall ;;
esac
