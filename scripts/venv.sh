# shellcheck shell=bash
# Shared by the scripts: make .venv and install the project into it, once per change of pyproject.toml.
ensure_venv() {
    local extras="$1"
    local python="${PYTHON:-python3}"
    if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        echo "error: Python 3.11 or newer is needed as '$python' (set PYTHON=/path/to/python3.11)" >&2
        exit 1
    fi
    # A venv without pip is a broken one (on Debian, python3-venv missing when it was made): make it again.
    if ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
        [ ! -e .venv ] || echo "The .venv here is broken (no pip in it): making it again …" >&2
        rm -rf .venv
        if ! "$python" -m venv .venv || ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
            rm -rf .venv
            echo "error: '$python -m venv' cannot make a working venv; on Debian: sudo apt-get install python3-venv" >&2
            exit 1
        fi
    fi
    local stamp=".venv/.installed${extras:+-$extras}"
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
        echo "Installing uno-launcher${extras:+ with [$extras]} into .venv …" >&2
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extras:+[$extras]}"
        touch "$stamp"
    fi
}
