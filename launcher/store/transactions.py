"""The one way the store writes: BEGIN IMMEDIATE … COMMIT, so that a change is whole or not at all."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class Connection(sqlite3.Connection):
    """The store's connections (`Store` opens them so): `on_commit` is told of each transaction that commits, a write
    that went through (the end of a full disk's trouble, `Store.trouble`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_commit: Callable[[], None] | None = None


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK if the block raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:  # re-raised: a transaction cut short by anything at all is rolled back
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    if isinstance(conn, Connection) and conn.on_commit is not None:
        conn.on_commit()
