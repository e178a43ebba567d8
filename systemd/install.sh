#!/usr/bin/env bash
# Install uno-launcher as a systemd service on Raspberry Pi OS (Bookworm), from a clone of this repository:
#
#     sudo systemd/install.sh               install, or update after a `git pull`
#     sudo systemd/install.sh --uninstall   remove the service; the config and the state directory stay
#
# Creates the system user `uno-launcher` (groups gpio and dialout), a virtualenv in /opt/uno-launcher/.venv with
# this checkout installed into it, /etc/uno-launcher/config.toml (only if absent: an existing config is never
# touched), and the unit; switches Wi-Fi power saving off; allows the service to power the Pi off when
# [power] hold_to_poweroff_s is set; then enables and (re)starts the service. Safe to run again.
#
# Sourced (tests), it only defines its functions; `set_paths DIR` then puts every file it writes under DIR.
set -euo pipefail

USER_NAME=uno-launcher

# Every path the script writes or removes, under $1 (empty on the machine itself).
set_paths() {
    ROOT="$1"
    PREFIX="$ROOT/opt/uno-launcher"
    VENV="$PREFIX/.venv"
    CONFIG_DIR="$ROOT/etc/uno-launcher"
    CONFIG="$CONFIG_DIR/config.toml"
    STATE_DIR="$ROOT/var/lib/uno-launcher"
    UNIT="$ROOT/etc/systemd/system/uno-launcher.service"
    DROP_INS="$UNIT.d"
    BACKUP_UNITS=("$ROOT/etc/systemd/system/uno-launcher-backup.service" "$ROOT/etc/systemd/system/uno-launcher-backup.timer")
    WIFI_DROP_IN="$DROP_INS/wifi-power-save.conf"
    NM_CONF="$ROOT/etc/NetworkManager/conf.d/90-uno-launcher-wifi-power-save.conf"
    POLKIT_RULE="$ROOT/etc/polkit-1/rules.d/50-uno-launcher-power-off.rules"
    NET_CLASS="$ROOT/sys/class/net"
}

step() { echo "==> $*"; }
fail() {
    echo "install.sh: $*" >&2
    exit 1
}

# --- Wi-Fi power saving ---------------------------------------------------------------------------------------
# With power saving on, the Wi-Fi chip sleeps between beacons, and a phone's press waits for it to wake: on a
# Pi Zero W that adds hundreds of milliseconds to every press.

wifi_interfaces() {
    local dev
    for dev in "$NET_CLASS"/*; do
        if [ -e "$dev/phy80211" ] || [ -d "$dev/wireless" ]; then
            basename "$dev"
        fi
    done
}

network_manager_runs() {
    command -v nmcli >/dev/null && [ "$(nmcli -t -f RUNNING general 2>/dev/null)" = running ]
}

# Off for good: NetworkManager's default for every Wi-Fi connection where it manages Wi-Fi (Raspberry Pi OS
# Bookworm), else `iw` at each start of the service.
wifi_power_save_off() {
    local interfaces iface iw
    interfaces="$(wifi_interfaces)"
    if [ -z "$interfaces" ]; then
        step "No Wi-Fi interface on this machine: no Wi-Fi power saving to switch off"
        forget_wifi_power_save
        return 0
    fi
    if network_manager_runs; then
        step "Wi-Fi power saving off for every connection ($NM_CONF)"
        install -d -m 0755 "$(dirname "$NM_CONF")"
        cat >"$NM_CONF" <<'CONF'
# Written by uno-launcher's systemd/install.sh, removed by install.sh --uninstall. Wi-Fi power saving off for
# every connection (2 = disable): a sleeping Wi-Fi chip delays each press sent from a phone.
[connection]
wifi.powersave = 2
CONF
        chmod 0644 "$NM_CONF"
        rm -f "$WIFI_DROP_IN"
        nmcli general reload conf || step "NetworkManager did not reload its configuration: it applies at the next boot"
        # NetworkManager applies it as each connection comes up; the connection up now is switched off here.
        if command -v iw >/dev/null; then
            for iface in $interfaces; do
                iw dev "$iface" set power_save off || true
            done
        fi
        return 0
    fi
    rm -f "$NM_CONF"
    if ! iw="$(command -v iw)"; then
        step "NetworkManager does not run here and iw is missing: Wi-Fi power saving stays as it is (apt-get install -y iw, then run this again)"
        rm -f "$WIFI_DROP_IN"
        return 0
    fi
    step "Wi-Fi power saving off at each start of the service, with iw ($WIFI_DROP_IN)"
    install -d -m 0755 "$DROP_INS"
    {
        echo "# Written by uno-launcher's systemd/install.sh, removed by install.sh --uninstall: NetworkManager does not"
        echo "# manage Wi-Fi here, so iw switches power saving off before each start. '+': as root, outside the"
        echo "# sandbox (the daemon itself has no CAP_NET_ADMIN); '-': a missing interface does not stop the service."
        echo "[Service]"
        for iface in $interfaces; do
            echo "ExecStartPre=-+$iw dev $iface set power_save off"
        done
    } >"$WIFI_DROP_IN"
    chmod 0644 "$WIFI_DROP_IN"
}

forget_wifi_power_save() {
    rm -f "$WIFI_DROP_IN"
    if [ -e "$NM_CONF" ]; then
        rm -f "$NM_CONF"
        if network_manager_runs; then
            nmcli general reload conf || true
        fi
    fi
}

# --- Power-off from the launcher's button -----------------------------------------------------------------------
# logind powers off for a user that polkit allows; this rule allows the service's user and no one else, and only
# while the config asks for it.

hold_to_poweroff_on() {
    [ -e "$CONFIG" ] || return 1
    # The daemon's own reader, so that a value it refuses is refused here too, naming the key.
    "$VENV/bin/python" - "$CONFIG" <<'PY'
import sys
from pathlib import Path

from launcher.config import ConfigError, load

try:
    seconds = load(Path(sys.argv[1])).power.hold_to_poweroff_s
except ConfigError as e:
    print(f"install.sh: {e}", file=sys.stderr)
    sys.exit(2)
sys.exit(0 if seconds else 1)
PY
}

power_off_rule() {
    local status=0
    hold_to_poweroff_on || status=$?
    if [ "$status" -gt 1 ]; then
        fail "fix $CONFIG first (the service would not start with it)"
    fi
    if [ "$status" -ne 0 ]; then
        if [ -e "$POLKIT_RULE" ]; then
            step "[power] hold_to_poweroff_s is off: removing $POLKIT_RULE"
            rm -f "$POLKIT_RULE"
        fi
        return 0
    fi
    step "Allowing $USER_NAME to power the Pi off ($POLKIT_RULE)"
    install -d -m 0755 "$(dirname "$POLKIT_RULE")"
    cat >"$POLKIT_RULE" <<RULE
// Written by uno-launcher's systemd/install.sh because [power] hold_to_poweroff_s is set in $CONFIG;
// removed when it is not, and by install.sh --uninstall. Holding the launcher's button powers the Pi off:
// the service's user may ask logind to, also while someone is logged in over SSH. Nothing else.
polkit.addRule(function (action, subject) {
    if ((action.id === "org.freedesktop.login1.power-off" ||
         action.id === "org.freedesktop.login1.power-off-multiple-sessions") &&
        subject.user === "$USER_NAME") {
        return polkit.Result.YES;
    }
});
RULE
    chmod 0644 "$POLKIT_RULE"
    if ! command -v pkaction >/dev/null; then
        step "Installing polkitd (logind asks it who may power off)"
        apt-get install -y polkitd
    fi
}

# --- Install ----------------------------------------------------------------------------------------------------

install_everything() {
    local src
    src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    if [ ! -f "$src/pyproject.toml" ] || [ ! -f "$src/systemd/uno-launcher.service" ]; then
        fail "$src is not an uno-launcher checkout (no pyproject.toml or systemd/uno-launcher.service)"
    fi

    command -v python3 >/dev/null || fail "python3 is missing: apt-get install -y python3"
    python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        fail "Python 3.11 or later is needed (Raspberry Pi OS Bookworm has it); this is $(python3 --version)"
    if ! python3 -c 'import ensurepip' 2>/dev/null; then
        step "Installing python3-venv"
        apt-get install -y python3-venv
    fi

    # The unit names these groups: a missing one would stop the service from starting at all.
    local group
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

    step "Installing $src into $VENV"
    install -d -m 0755 "$PREFIX"
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/pip" install --disable-pip-version-check --quiet --upgrade pip
    # Built from a copy, so that root leaves no build/ or *.egg-info behind in the user's clone.
    BUILD="$(mktemp -d)"
    trap 'rm -rf "$BUILD"' EXIT
    tar -C "$src" --exclude=./.git --exclude=./.venv --exclude=./build --exclude='*.egg-info' -c . | tar -C "$BUILD" -x
    "$VENV/bin/pip" install --disable-pip-version-check --upgrade "${BUILD}[pi]"

    install -d -m 0755 "$CONFIG_DIR"
    if [ -e "$CONFIG" ]; then
        step "Keeping $CONFIG"
    else
        step "Writing $CONFIG (real GPIO, the page on every interface)"
        cat >"$CONFIG" <<'TOML'
# uno-launcher configuration; every key is described in docs/CONFIG.md.
# After editing: sudo systemctl restart uno-launcher (after changing [power]: sudo systemd/install.sh)

[hardware]
backend = "gpio"  # "serial" for a launcher board on USB (then set [serial] port)

[web]
host = "0.0.0.0"  # every interface, so phones on the Wi-Fi can open the page
port = 8080

[state]
dir = "/var/lib/uno-launcher"  # the service's StateDirectory

[power]
hold_to_poweroff_s = 0  # hold the big button this many seconds while idle to power the Pi off; 0: never
TOML
        chmod 0644 "$CONFIG"
    fi

    step "Installing $UNIT"
    install -m 0644 "$src/systemd/uno-launcher.service" "$UNIT"
    local unit
    for unit in "${BACKUP_UNITS[@]}"; do # the nightly backup of the store, the newest 7 in $STATE_DIR/backups
        install -m 0644 "$src/systemd/${unit##*/}" "$unit"
    done
    wifi_power_save_off
    power_off_rule

    if [ ! -d /run/systemd/system ]; then
        step "systemd is not running here (a chroot or container?): the service starts at the next boot"
        systemctl enable "$USER_NAME.service" "$USER_NAME-backup.timer"
        exit 0
    fi
    systemctl daemon-reload
    systemctl enable "$USER_NAME.service"
    systemctl enable --now "$USER_NAME-backup.timer"
    step "Starting the service (waits until the page is up)"
    if ! systemctl restart "$USER_NAME.service"; then
        journalctl --unit "$USER_NAME" --lines 20 --no-pager >&2 || true
        fail "the service did not start; the log is above (more: journalctl -u $USER_NAME)"
    fi
    step "Done: open http://$(hostname).local:8080/ on a phone (the port is in $CONFIG)"
    echo "    status: systemctl status $USER_NAME    log: journalctl -u $USER_NAME -f"
}

# --- Uninstall --------------------------------------------------------------------------------------------------

uninstall() {
    if [ -d "$ROOT/run/systemd/system" ]; then
        step "Stopping and disabling $USER_NAME.service"
        systemctl disable --now "$USER_NAME.service" "$USER_NAME-backup.timer" || true
    fi
    step "Removing the units and the drop-ins ($UNIT, $DROP_INS, the nightly backup's), the program ($PREFIX)"
    rm -f "$UNIT" "${BACKUP_UNITS[@]}"
    rm -rf "$DROP_INS" "$PREFIX"
    step "Removing the Wi-Fi power saving setting and the power-off rule"
    forget_wifi_power_save
    rm -f "$POLKIT_RULE"
    if [ -d "$ROOT/run/systemd/system" ]; then
        systemctl daemon-reload
    fi
    step "Kept the games, events, PINs and backups in $STATE_DIR, the config in $CONFIG_DIR and the user $USER_NAME"
    echo "    to forget them too: sudo rm -r $STATE_DIR $CONFIG_DIR && sudo userdel $USER_NAME"
}

main() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "install.sh: must run as root: sudo $0${1:+ $1}" >&2
        exit 1
    fi
    set_paths ""
    case "${1:-}" in
    "") install_everything ;;
    --uninstall) uninstall ;;
    *) fail "unknown option $1; use no option to install, or --uninstall" ;;
    esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    main "$@"
fi
