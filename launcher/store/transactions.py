"""The one way the store writes: BEGIN IMMEDIATE … COMMIT, so that a change is whole or not at all."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


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
