"""A store on a read-only disk, opened for reading: what backup, export and verify do on a card gone read-only.

SQLite cannot make the index its write-ahead log needs on a read-only file system, so a store left with its last
writes in `-wal` (as a daemon cut off leaves it) cannot be opened there at all. Nothing can change the files on such
a disk, so a plain copy of the store and its log is the store as it is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from launcher.store.database import StoreError, disk_of, store_failure


@contextmanager
def readable(path: Path) -> Iterator[Path]:
    """A path at which the store at `path` can be opened, even on a read-only file system: there SQLite cannot
    make the index its write-ahead log needs, so the store and its log are copied, as they are (nothing can change
    them), into a private temporary directory, which goes afterwards. Elsewhere `path` itself."""
    disk = disk_of(path.parent)
    if disk is None or not disk.f_flag & os.ST_RDONLY:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="uno-launcher-ro-", dir=_scratch()) as copies:
        copy = Path(copies) / path.name
        try:
            shutil.copyfile(path, copy)
            wal = path.with_name(path.name + "-wal")
            if wal.exists():  # what was written last may be only there
                shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
                with contextlib.closing(sqlite3.connect(copy)) as conn:  # the last to close folds the log in
                    conn.execute("PRAGMA user_version").fetchone()
        except OSError as e:
            raise StoreError(f"the store {path} cannot be read ({e.strerror}): check the file and its disk") from None
        except sqlite3.Error as e:
            raise store_failure(path, e) from e
        yield copy


def _scratch() -> str:
    """Where the copy goes: the usual temporary directory, or memory when that is on the read-only disk too (a
    card that failed whole: Raspberry Pi OS keeps /tmp on the card)."""
    try:
        return tempfile.gettempdir()
    except FileNotFoundError:  # no temporary directory can be written
        return "/dev/shm"
