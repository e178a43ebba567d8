#!/usr/bin/env bash
# Install uno-launcher as a systemd service on Raspberry Pi OS (Bookworm), from a clone of this repository:
#
#     sudo systemd/install.sh
#
# Creates the system user `uno-launcher` (groups gpio and dialout), a virtualenv in /opt/uno-launcher/.venv with
# this checkout installed into it, /etc/uno-launcher/config.toml (only if absent: an existing config is never
# touched), and the unit; then enables and (re)starts the service. Safe to run again, e.g. after a `git pull`.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
    echo "install.sh: must run as root: sudo $0" >&2
    exit 1
fi

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
USER_NAME=uno-launcher
PREFIX=/opt/uno-launcher
VENV="$PREFIX/.venv"
CONFIG_DIR=/etc/uno-launcher
CONFIG="$CONFIG_DIR/config.toml"
STATE_DIR=/var/lib/uno-launcher
UNIT=/etc/systemd/system/uno-launcher.service

step() { echo "==> $*"; }
fail() {
    echo "install.sh: $*" >&2
    exit 1
}

if [ ! -f "$SRC/pyproject.toml" ] || [ ! -f "$SRC/systemd/uno-launcher.service" ]; then
    fail "$SRC is not an uno-launcher checkout (no pyproject.toml or systemd/uno-launcher.service)"
fi

command -v python3 >/dev/null || fail "python3 is missing: apt-get install -y python3"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    fail "Python 3.11 or later is needed (Raspberry Pi OS Bookworm has it); this is $(python3 --version)"
if ! python3 -c 'import ensurepip' 2>/dev/null; then
    step "Installing python3-venv"
    apt-get install -y python3-venv
fi

# The unit names these groups: a missing one would stop the service from starting at all.
for group in gpio dialout; do
    if ! getent group "$group" >/dev/null; then
        step "Creating group $group (not a Raspberry Pi OS image? /dev/gpiochip* may then stay root-only)"
        groupadd --system "$group"
    fi
done
if id -u "$USER_NAME" >/dev/null 2>&1; then
    step "User $USER_NAME exists"
else
    step "Creating system user $USER_NAME"
    useradd --system --user-group --no-create-home --home-dir "$STATE_DIR" --shell /usr/sbin/nologin \
        --comment "UNO launcher daemon" "$USER_NAME"
fi
usermod --append --groups gpio,dialout "$USER_NAME"

step "Installing $SRC into $VENV"
install -d -m 0755 "$PREFIX"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install --disable-pip-version-check --quiet --upgrade pip
# Built from a copy, so that root leaves no build/ or *.egg-info behind in the user's clone.
BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT
tar -C "$SRC" --exclude=./.git --exclude=./.venv --exclude=./build --exclude='*.egg-info' -c . | tar -C "$BUILD" -x
"$VENV/bin/pip" install --disable-pip-version-check --upgrade "${BUILD}[pi]"

install -d -m 0755 "$CONFIG_DIR"
if [ -e "$CONFIG" ]; then
    step "Keeping $CONFIG"
else
    step "Writing $CONFIG (real GPIO, the page on every interface)"
    cat >"$CONFIG" <<'EOF'
# uno-launcher configuration; every key is described in docs/CONFIG.md.
# After editing: sudo systemctl restart uno-launcher

[hardware]
backend = "gpio"  # "serial" for a launcher board on USB (then set [serial] port)

[web]
host = "0.0.0.0"  # every interface, so phones on the Wi-Fi can open the page
port = 8080

[state]
dir = "/var/lib/uno-launcher"  # the service's StateDirectory
EOF
    chmod 0644 "$CONFIG"
fi

step "Installing $UNIT"
install -m 0644 "$SRC/systemd/uno-launcher.service" "$UNIT"

if [ ! -d /run/systemd/system ]; then
    step "systemd is not running here (a chroot or container?): the service starts at the next boot"
    systemctl enable "$USER_NAME.service"
    exit 0
fi
systemctl daemon-reload
systemctl enable "$USER_NAME.service"
step "Starting the service (waits until the page is up)"
if ! systemctl restart "$USER_NAME.service"; then
    journalctl --unit "$USER_NAME" --lines 20 --no-pager >&2 || true
    fail "the service did not start; the log is above (more: journalctl -u $USER_NAME)"
fi
step "Done: open http://$(hostname).local:8080/ on a phone (the port is in $CONFIG)"
echo "    status: systemctl status $USER_NAME    log: journalctl -u $USER_NAME -f"
