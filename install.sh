#!/bin/sh
# Placard appliance installer.
# Not written yet: the appliance issue ("install.sh, systemd, release package, ...")
# brings the real installer (placard user, /opt/placard, /var/lib/placard, the unit).
# Until then, run from a checkout: npm ci && npm start (see README.md).
echo "install.sh: the appliance installer is not written yet; see README.md (npm ci && npm start)" >&2
exit 1
