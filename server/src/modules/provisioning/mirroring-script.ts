import { render, type ScriptTarget, spkiList } from './scripts.js';

/** The mirroring receiver's installer and unit. */
const MIRRORING_SERVICE = `[Unit]
Description=Placard mirroring receiver
After=network-online.target
Wants=network-online.target

[Service]
User=placard-player
Group=placard-player
Environment=PLACARD_SERVER_URL=@@SERVER_URL@@
Environment=PLACARD_SERVER_PINS=@@PINS@@
ExecStart=/usr/local/bin/placard-mirroring-receiver
Restart=always
RestartSec=5
StateDirectory=placard-mirroring
StateDirectoryMode=0700
WorkingDirectory=/var/lib/placard-mirroring
UMask=0077
# A network service: no devices, no other users' files, no privileges. Left out:
# MemoryDenyWriteExecute (a receiver with a JIT would not start); a receiver that needs
# more gets a drop-in (systemctl edit placard-mirroring).
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
PrivateUsers=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
ProcSubset=pid
CapabilityBoundingSet=
AmbientCapabilities=
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
RemoveIPC=yes
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallErrorNumber=EPERM

[Install]
WantedBy=multi-user.target
`;

/** The mirroring unit for a target (its URL and pins are in it). */
export function mirroringServiceUnit(target: ScriptTarget): string {
  return MIRRORING_SERVICE.replaceAll('@@SERVER_URL@@', target.serverUrl).replaceAll('@@PINS@@', target.pin ? spkiList(target.pin) : '');
}

const MIRRORING_SCRIPT = String.raw`#!/bin/sh
# Placard mirroring receiver installer, served by @@SERVER_URL@@/install-mirroring.sh
#   @@COMMAND@@
# Downloads the receiver binary this server's admin provided (over HTTPS with the server's key
# pinned), checks its sha256 and CPU, installs it as /usr/local/bin/placard-mirroring-receiver
# and runs it under placard-mirroring.service. Options: --pin PINS (as the console shows).
set -eu
SERVER_URL='@@SERVER_URL@@'
PIN='@@PIN@@'
EXPECTED='@@SHA256@@'
RECEIVER_ARCH='@@ARCH@@'
say() { printf 'placard-mirroring: %s\n' "$*"; }
die() { printf 'placard-mirroring: error: %s\n' "$*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --pin) [ $# -ge 2 ] || die "--pin needs a value"; PIN=$2; shift 2 ;;
    --pin=*) PIN=${'$'}{1#--pin=}; shift ;;
    *) die "unknown option $1" ;;
  esac
done
case "$PIN" in *[!A-Za-z0-9+/=\;]*) die "--pin must look like sha256//BASE64 (several joined by ;)" ;; esac

# The receiver is one binary for one CPU: refuse a box it cannot run on before anything else.
machine=$(uname -m)
case "$machine" in
  x86_64|amd64) arch=x86_64 ;;
  aarch64|arm64) arch=aarch64 ;;
  *) die "this box's CPU ($machine) is not supported: the mirroring receiver runs on x86_64 and aarch64 (64-bit Raspberry Pi OS on a Pi 4 or 5), not on 32-bit systems" ;;
esac
if [ -z "$RECEIVER_ARCH" ]; then
  die "the receiver this server has is not an x86_64 or aarch64 Linux program: an administrator uploads one built for $arch"
fi
[ "$RECEIVER_ARCH" = "$arch" ] || die "the receiver this server has is built for $RECEIVER_ARCH; this box is $arch: an administrator uploads a $arch build"
[ "$(id -u)" = 0 ] || die "run as root (sudo)"

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
url="$SERVER_URL/api/v1/install/mirroring/receiver"
if [ -n "$PIN" ]; then
  command -v curl >/dev/null 2>&1 || die "curl is needed to check the server's key: apt-get install curl"
  curl -fsS --retry 3 --proto '=https' -k --pinnedpubkey "$PIN" -o "$tmp" "$url" || die "could not download $url (with the key of the server pinned)"
elif command -v curl >/dev/null 2>&1; then curl -fsSL --retry 3 -o "$tmp" "$url" || die "could not download $url"
else wget -qO "$tmp" "$url" || die "could not download $url"; fi
got=$(sha256sum "$tmp" | cut -d' ' -f1)
[ "$got" = "$EXPECTED" ] || die "checksum mismatch (got $got, expected $EXPECTED)"
install -m 0755 "$tmp" /usr/local/bin/placard-mirroring-receiver
id placard-player >/dev/null 2>&1 || useradd --system --user-group --no-create-home --shell /usr/sbin/nologin placard-player
cat >/etc/systemd/system/placard-mirroring.service <<'EOF'
@@UNIT@@EOF
systemctl daemon-reload
systemctl enable placard-mirroring.service >/dev/null 2>&1
systemctl restart placard-mirroring.service
say "installed and started the mirroring receiver"
`;

/** The mirroring receiver installer: downloads the admin-provided binary, checks its CPU and sha256, runs it as a hardened service. */
export function mirroringInstallScript(target: ScriptTarget, sha256: string, architecture: string | null): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error('not a sha256');
  return render(MIRRORING_SCRIPT, target, { SHA256: sha256, ARCH: architecture ?? '', UNIT: mirroringServiceUnit(target) }, 'install-mirroring.sh');
}
