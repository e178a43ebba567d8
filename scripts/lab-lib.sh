# shellcheck shell=bash
# Shared by the lab's scripts (scripts/lab, scripts/lab-*): where the lab caches what it downloads, a private APT
# for Debian packages the host does not use, and timing.

# Downloads and built images live outside the checkout (so that systemd/install.sh, which copies the checkout,
# never copies them): /var/cache/uno-lab for root, ~/.cache/uno-lab otherwise, or UNO_LAB_CACHE.
# tests/real_micropython.py finds the MicroPython interpreter by the same rule.
lab_cache_dir() {
    if [ -n "${UNO_LAB_CACHE:-}" ]; then
        echo "$UNO_LAB_CACHE"
    elif [ "$(id -u)" = 0 ]; then
        echo /var/cache/uno-lab
    else
        echo "${XDG_CACHE_HOME:-$HOME/.cache}/uno-lab"
    fi
}

DEBIAN_MIRROR="${UNO_LAB_MIRROR:-http://deb.debian.org/debian}"

# private_apt DIR SUITE: an APT configuration in DIR that reads only SUITE of DEBIAN_MIRROR (the host's sources,
# state and cache untouched), updated; prints the APT_CONFIG file to use. Signatures are checked against the
# host's Debian keyrings (Debian 12's debian-archive-keyring has the keys of Debian 13 too).
private_apt() {
    local dir="$1" suite="$2"
    mkdir -p "$dir/state/lists/partial" "$dir/cache/archives/partial" "$dir/etc/apt.conf.d" "$dir/etc/preferences.d"
    echo "deb $DEBIAN_MIRROR $suite main" >"$dir/etc/sources.list"
    : >"$dir/etc/preferences"
    {
        echo "Dir::State \"$dir/state\";"
        echo "Dir::Cache \"$dir/cache\";"
        echo "Dir::Etc::SourceList \"$dir/etc/sources.list\";"
        echo "Dir::Etc::SourceParts \"$dir/etc/apt.conf.d\";"
        echo "Dir::Etc::Preferences \"$dir/etc/preferences\";"
        echo "Dir::Etc::PreferencesParts \"$dir/etc/preferences.d\";"
        echo "Dir::State::status \"$dir/state/status\";"
        echo 'APT::Architectures { "amd64"; };'
        echo 'Acquire::Languages "none";'
        # As root, apt downloads as the _apt user, who may not write into the lab's directories.
        echo 'APT::Sandbox::User "root";'
    } >"$dir/apt.conf"
    : >"$dir/state/status"
    APT_CONFIG="$dir/apt.conf" apt-get -qq update >&2
    echo "$dir/apt.conf"
}

# Seconds since the epoch with centiseconds, and the seconds (one decimal) since a stamp taken with it.
now() { date +%s.%N | cut -c1-13; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

log() { echo "lab: $*" >&2; }
die() {
    echo "lab: error: $*" >&2
    exit 1
}

# report PASS|FAIL NAME COST DETAIL: one line per check; the tally goes to LAB_RESULTS (set by scripts/lab).
report() {
    printf '%-4s  %-24s  %-38s  %s\n' "$1" "$2" "$3" "$4"
    if [ -n "${LAB_RESULTS:-}" ]; then echo "$1 $2" >>"$LAB_RESULTS"; fi
}
