"""The one way the store writes: BEGIN IMMEDIATE … COMMIT, so that a change is whole or not at all; inside a
transaction already open (the write-behind's, which gathers several parts' writes into one commit), a SAVEPOINT, so
that a write that fails takes back only its own part."""

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
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK if the block raises; within an open transaction, a savepoint."""
    with _savepoint(conn) if conn.in_transaction else _begin(conn):
        yield


@contextmanager
def _begin(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:  # re-raised: a transaction cut short by anything at all is rolled back
        if conn.in_transaction:  # a COMMIT that failed (a full disk) may have ended it already, or not
            conn.execute("ROLLBACK")
        raise
    if isinstance(conn, Connection) and conn.on_commit is not None:
        conn.on_commit()


@contextmanager
def _savepoint(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("SAVEPOINT part")
    try:
        yield
    except BaseException:  # re-raised: only this part is taken back, the enclosing transaction goes on
        conn.execute("ROLLBACK TO part")
        conn.execute("RELEASE part")
        raise
    conn.execute("RELEASE part")
