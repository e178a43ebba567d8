"""A first start that fails after making up the PINs must not lose them: the next start makes and shows new ones."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from launcher.config import Config
from launcher.daemon import Daemon, StartupError


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
