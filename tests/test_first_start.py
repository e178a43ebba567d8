"""A first start shows its PINs and a QR code that joins with them; one that fails after making them up must not
lose them: the next start makes and shows new ones."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from launcher.config import Config
from launcher.daemon import Daemon, StartupError
from launcher.qr import join_url, qr_text
from tests.conftest import start_daemon, wait_until


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


def test_the_first_start_prints_a_qr_code_that_joins_with_the_table_pin(tmp_path: Path) -> None:
    """Drawn while the daemon already serves; the same code a phone's camera reads from the page's own maker."""
    daemon = start_daemon(tmp_path)
    try:
        shown = "".join(daemon.output)
        listed = re.search(r"Open (\S+) on a phone(?: \(or (.*)\))?", shown)
        assert listed is not None, shown
        last_url = (listed.group(2) or listed.group(1)).split(", ")[-1]
        code = qr_text(join_url(last_url, daemon.table_pin))
        wait_until(lambda: code in "".join(daemon.output))
    finally:
        daemon.close()
