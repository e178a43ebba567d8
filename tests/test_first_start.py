"""A first start shows its PINs at once and hashes them while it serves; one that fails after making them up must
not lose them: the next start makes and shows new ones."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from launcher import cli
from launcher.access import book as access
from launcher.access.book import AccessBook, Role
from launcher.config import Config
from launcher.daemon import Daemon, StartupError
from launcher.store import STORE_FILE, Store, access_tables
from launcher.system import netinfo
from launcher.system.qr import join_url, qr_text
from tests.conftest import http_json, join, start_daemon


def test_a_first_start_that_cannot_listen_leaves_no_pin_nobody_was_shown(tmp_path: Path) -> None:
    taken = socket.create_server(("127.0.0.1", 0))
    port = taken.getsockname()[1]
    config = Config().replace("state", dir=str(tmp_path)).replace("web", host="127.0.0.1", port=port)
    try:
        with pytest.raises(StartupError, match="cannot listen"):
            Daemon(config)
    finally:
        taken.close()
    daemon = Daemon(config.replace("web", port=0))
    try:
        assert daemon.new_pins is not None, "the next start must make up PINs and show them"
        assert daemon.new_pins.table is not None and daemon.new_pins.admin is not None
    finally:
        daemon.close()


def test_the_daemon_answers_and_joins_before_the_first_pins_are_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PBKDF2 takes seconds on a Pi Zero: the first start listens without waiting for it, checks a join against
    the PIN in memory meanwhile, and a stop waits for the hashes so that the PINs shown stay the table's."""
    release = threading.Event()
    real = access._hash

    def held(pin: str, salt: bytes) -> bytes:  # the pin-hashing thread's hashes wait for the test
        if threading.current_thread().name == "pin-hashing":
            release.wait()
        return real(pin, salt)

    monkeypatch.setattr(access, "_hash", held)
    config = Config().replace("state", dir=str(tmp_path)).replace("web", host="127.0.0.1", port=0)
    daemon = Daemon(config)
    try:
        threading.Thread(target=daemon.server.run, name="waitress", daemon=True).start()
        assert daemon.new_pins is not None and daemon.new_pins.table is not None
        url = daemon.urls[0].rstrip("/")
        assert http_json(url + "/api/state", "GET")[0] == 200
        cookie = join(url, daemon.new_pins.table)
        assert http_json(url + "/api/press", "POST", cookie=cookie)[0] == 200
        assert _saved(daemon.store) == set()  # all of that before a single hash was saved
    finally:
        release.set()
        daemon.close()
    assert _saved(daemon.store) == {"table", "admin"}
    again = Daemon(config)
    try:
        assert again.new_pins is None
        assert again.access.role_for_pin(daemon.new_pins.table) is Role.TABLE
    finally:
        again.close()


def _saved(store: Store) -> set[str]:
    with store.connect() as conn:
        return {role for role, _, _ in access_tables.pin_hashes(conn)}


def test_the_first_start_prints_a_qr_code_that_joins_with_the_invites_token_on_a_terminal(tmp_path: Path) -> None:
    """Drawn while the daemon already serves; the same code a phone's camera reads from the page's own maker, the
    link the invite shows (its token, never the PIN). Only on a terminal (`script` gives the daemon one)."""
    config = tmp_path / "config.toml"
    config.write_text(f'[state]\ndir = "{tmp_path / "state"}"\n', encoding="utf-8")
    # On every interface, as a Pi serves phones (only loopback talks to it here): a daemon only this machine
    # reaches draws no QR code at all (below).
    run = [sys.executable, "-m", "launcher", "run", "--sim", "--host", "0.0.0.0", "--port", "0", "--config"]
    command = shlex.join([*run, str(config)])
    process = subprocess.Popen(
        ["script", "-qfec", command, "/dev/null"], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    shown = ""
    try:
        assert process.stdout is not None
        for line in process.stdout:
            shown += line
            if "first start are in" in shown or (re.search(r"Admin PIN: \d+", shown) and "\u2588" in line):
                break
        assert "first start are in" not in shown, "a terminal is shown the PINs"
        listed = re.search(r"Open (\S+) on a phone(?: \(or (.*)\))?", shown)
        assert listed is not None, shown
        last_url = (listed.group(2) or listed.group(1)).split(", ")[-1]
        token = AccessBook(Store(tmp_path / "state" / STORE_FILE)).invite_token()
        code = qr_text(join_url(last_url, token))
        for line in process.stdout:
            shown += line
            if code in shown:
                break
        assert code in shown
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.communicate(timeout=30)


def test_a_first_start_to_a_pipe_puts_the_pins_in_a_file_and_no_invite_in_the_qr_code(tmp_path: Path) -> None:
    """nohup, a pipe or a log file outside systemd: output that more people read than the owner (issue #45)."""
    daemon = start_daemon(tmp_path)
    try:
        shown = "".join(daemon.output)
        pins = (daemon.state_dir / "first-pins.txt").resolve()
        assert f"are in {pins}" in shown and (pins.stat().st_mode & 0o777) == 0o600
        assert daemon.joined.table_pin not in shown and daemon.joined.admin_pin not in shown
    finally:
        daemon.close()
    token = AccessBook(Store(daemon.state_dir / STORE_FILE)).invite_token()
    assert qr_text(join_url(daemon.url + "/", token)) not in "".join(daemon.output)


def test_a_daemon_only_this_machine_reaches_says_how_to_let_phones_in_and_draws_no_qr_code(tmp_path: Path) -> None:
    """Listening on 127.0.0.1 (scripts/run-sim's default): a phone cannot open that address (it is the phone itself),
    so the console says where to open the page here and how to let phones in, and draws no code that cannot work."""
    daemon = start_daemon(tmp_path)
    token = AccessBook(Store(daemon.state_dir / STORE_FILE)).invite_token()
    daemon.close()  # all it printed, up to its last line
    shown = "".join(daemon.output)
    assert "Stopped; motor off." in shown
    assert re.search(r"Open http://127\.0\.0\.1:\d+/ in a browser on this machine", shown), shown
    assert "on a phone" not in shown and "--host 0.0.0.0" in shown
    assert qr_text(join_url(daemon.url + "/", token)) not in shown
    assert not {"█", "▀", "▄"} & set(shown)


def test_a_daemon_on_the_wifi_is_opened_on_a_phone_at_each_of_its_addresses() -> None:
    urls = ["http://uno.local:8080/", "http://192.168.1.20:8080/"]
    assert cli._where_to_open(urls, local=False) == (
        "Open http://uno.local:8080/ on a phone (or http://192.168.1.20:8080/)"
    )


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.20", False),
        ("uno.local", False),
    ],
)
def test_which_addresses_no_phone_can_reach(host: str, local: bool) -> None:
    assert netinfo.loopback_only(host) is local
