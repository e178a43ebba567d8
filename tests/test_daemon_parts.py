"""The daemon built from its declaration (launcher/daemon_parts.py): each part where the daemon declares it, of the
type it declares, and a start that fails leaving nothing running."""

from __future__ import annotations

import socket
import threading
import types
import typing
from pathlib import Path

import pytest

from launcher.daemon import Daemon, StartupError
from launcher.daemon_parts import PARTS
from tests.conftest import local_config, local_daemon


def _of_type(value: object, hint: object) -> bool:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_of_type(value, arg) for arg in typing.get_args(hint))
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    if getattr(hint, "_is_protocol", False):  # the hardware's: every member it declares, as mypy checks it
        return all(hasattr(value, name) for name in _members(typing.cast(type, hint)))
    return isinstance(value, typing.cast(type, origin or hint))


def _members(protocol: type) -> set[str]:
    bases = [base for base in protocol.__mro__ if base not in (object, typing.Protocol, typing.Generic)]
    found = {name for base in bases for name in (*vars(base), *getattr(base, "__annotations__", {}))}
    return {name for name in found if not name.startswith("_")}


def test_every_part_is_kept_where_the_daemon_declares_it_with_the_type_it_declares(tmp_path: Path) -> None:
    declared = typing.get_type_hints(Daemon)
    names = [part.name for part in PARTS if part.name is not None]
    assert len(names) == len(set(names)), "a part declared twice"
    with local_daemon(tmp_path) as daemon:
        for name in names:
            assert name in declared, f"{name}: built, but its type is not declared on Daemon"
            assert _of_type(getattr(daemon, name), declared[name]), f"{name}: not a {declared[name]}"


def test_a_start_that_cannot_listen_leaves_no_thread_running_and_the_state_free(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    taken = socket.create_server(("127.0.0.1", 0))
    config = local_config(tmp_path).replace("web", host="127.0.0.1", port=taken.getsockname()[1])
    try:
        with pytest.raises(StartupError, match="cannot listen"):
            Daemon(config)  # the server is built after every other part but the moments
    finally:
        taken.close()
    left = [thread.name for thread in set(threading.enumerate()) - before if thread.is_alive()]
    assert left == [], "parts built before the server were not undone"
    with local_daemon(tmp_path) as again:  # the state directory's lock was let go
        assert again.controller.alive(stuck_after=5.0)
