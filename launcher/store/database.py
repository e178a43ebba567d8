"""The store's file and its connections: the one owner of the SQLite database in the state directory.

WAL mode; `synchronous=FULL` so that anything a player was told is saved survives a power cut. Connections are
short-lived and per thread (one per request, one for the event writer), as in Flask's tutorial.

A file at the store's path is used only if it is an uno-launcher store; anything else (empty, not SQLite, damaged,
another program's, a newer schema) is refused with a `StoreError` and left as it is, never replaced. A new store is
made whole beside its path and moved into place, so the path never holds a half-made one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from launcher.errors import LauncherError
from launcher.refusals import Refusal
from launcher.store.migrations import MIGRATIONS, STAMPED_FROM, migrate, tables_at
from launcher.store.transactions import Connection

STORE_FILE = "launcher.sqlite3"  # in the state directory
APPLICATION_ID = 0x554E4F4C  # "UNOL", in the SQLite header (PRAGMA application_id): the file is an uno-launcher store
SQLITE_MAGIC = b"SQLite format 3\x00"


class StoreError(LauncherError, RuntimeError):
    """The store cannot be used; the message names the file and what to do, in one line for the console.
    `trouble`: the disk's, when it is full or read-only (nothing wrong with the store itself)."""

    def __init__(self, message: str, trouble: Refusal | None = None) -> None:
        super().__init__(message)
        self.trouble = trouble


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        # The disk's trouble at the last failed write and when, until a write goes through (`trouble`).
        self._trouble: tuple[Refusal, float] | None = None
        self._check_file()
        with self.connect() as conn:
            migrate(conn)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection; an SQLite failure in the block comes out as a StoreError saying what it means."""
        conn = self._open()
        try:
            with self._watched():
                yield conn
        finally:
            conn.close()

    @property
    def trouble(self) -> tuple[Refusal, float] | None:
        """The disk's trouble (full, read-only) that made the last write fail, and when (time.time()), or None
        once a write has gone through since: what the admin's page tells."""
        return self._trouble

    @contextmanager
    def _watched(self) -> Iterator[None]:
        """A block on one of the store's connections: an SQLite failure raised as a StoreError (`_failure`; a
        commit ends the trouble noted: `_committed`)."""
        try:
            yield
        except sqlite3.Error as e:
            raise self._failure(e) from e

    def _committed(self) -> None:
        self._trouble = None  # a write went through: the disk takes writes again

    def writer(self) -> Writer:
        """A long-lived connection for one thread that writes often (see `Writer`)."""
        return Writer(self)

    def _open(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path, timeout=10, isolation_level=None, check_same_thread=False, factory=Connection
            )
            conn.on_commit = self._committed
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as e:
            raise self._failure(e) from e
        return conn

    # --- the file -----------------------------------------------------------------------------------------

    def _check_file(self) -> None:
        """Make the store if there is none; refuse, changing nothing, a file that is not an uno-launcher store."""
        try:
            mode = self.path.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            self._create()
            return
        except OSError as e:
            raise self._failure(e) from e
        if stat.S_ISDIR(mode):
            raise StoreError(f"the store {self.path} is a directory, not a database file: move it aside")
        if not stat.S_ISREG(mode):
            raise StoreError(f"the store {self.path} is not a regular file: move it aside")
        try:
            with self.path.open("rb") as f:
                head = f.read(len(SQLITE_MAGIC))
        except OSError as e:
            raise self._failure(e) from e
        if not head:  # SQLite would take it as a new database, and a first start would make up new PINs
            raise StoreError(
                f"the store {self.path} is empty (0 bytes), so its PINs and history are gone: restore it from a "
                "backup, or remove it to start afresh with new PINs"
            )
        if head != SQLITE_MAGIC:
            raise StoreError(
                f"the store {self.path} is not an SQLite database: restore it from a backup, or move it aside to "
                "start afresh"
            )
        check_is_ours(self.path)

    def _create(self) -> None:
        """A new store, migrated to the end in a draft beside the path, then linked into place whole."""
        for suffix in ("-wal", "-journal"):
            journal = self.path.with_name(self.path.name + suffix)
            if journal.exists() and journal.stat().st_size > 0:  # pages of a database that is gone: not for a new one
                raise StoreError(
                    f"the store {self.path} is missing but its journal {journal} is there: restore {self.path.name} "
                    f"from a backup, or move {journal.name} aside to start afresh"
                )
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(
                f"the state directory {directory} cannot be made ({e.strerror}): set [state] dir to a directory "
                "the daemon may write to"
            ) from None
        draft = self.path.with_name(f"{self.path.name}.new-{os.getpid()}")  # its own: two first starts may race
        try:
            draft.unlink(missing_ok=True)  # left by a start of the same pid cut off while making it
            conn = sqlite3.connect(draft, isolation_level=None)
            try:
                conn.execute("PRAGMA synchronous=FULL")  # each migration's commit is on the disk
                migrate(conn)
            finally:
                conn.close()
            with contextlib.suppress(FileExistsError):  # another process made it first: theirs is checked and used
                os.link(draft, self.path)  # unlike a rename, never over a file
            sync_directory(directory)
            check_is_ours(self.path)
        except (OSError, sqlite3.Error) as e:
            raise self._failure(e) from e
        finally:
            for leftover in (draft, draft.with_name(draft.name + "-journal")):
                with contextlib.suppress(OSError):  # nothing to remove, or a read-only disk that made nothing
                    leftover.unlink()

    def _failure(self, error: OSError | sqlite3.Error) -> StoreError:
        """The StoreError for `error`, the disk's trouble in it noted (`trouble`)."""
        failure = store_failure(self.path, error)
        if failure.trouble is not None:
            self._trouble = (failure.trouble, time.time())
        return failure

    def damaged(self, row: str, error: Exception) -> StoreError:
        """For a row the daemon cannot go on without and cannot read: only an edited or damaged store holds one."""
        return StoreError(
            f"the store {self.path} has a damaged row: {row} cannot be read ({str(error)[:200]}): restore it from "
            "a backup (uno-launcher restore), or move the store aside to start afresh"
        )


class Writer:
    """One connection kept open for a thread that writes often, such as the hopper's count as each card leaves:
    opening a connection and reading the schema costs several times the write itself. For one thread at a time.

    Opened at once and kept through the disk's trouble: while one connection holds the store open, its write-ahead
    log's index (the `-shm` file) stays as it is; the first connection to open a store truncates the index and must
    grow it again, which a full card refuses, so that nothing could even read the store. After any other failure
    the connection is closed and the next write opens a new one."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._conn: sqlite3.Connection | None = store._open()

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        if self._conn is None:
            self._conn = self._store._open()
        try:
            with self._store._watched():
                yield self._conn
        except StoreError as e:
            if e.trouble is None:
                self.close()
            raise

    def close(self) -> None:
        """Safe to call twice."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def store_failure(path: Path, error: OSError | sqlite3.Error) -> StoreError:
    """What a failure to open, read or write the store means, and what to do, in one line."""
    directory = path.parent
    reason = error.strerror if isinstance(error, OSError) else str(error)
    code = error.errno if isinstance(error, OSError) else None
    sqlite_code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF  # the primary code of an extended one
    if sqlite_code == sqlite3.SQLITE_CORRUPT:
        return StoreError(
            f"the store {path} is damaged ({reason}): restore it from a backup, or move it aside to start afresh"
        )
    if sqlite_code == sqlite3.SQLITE_NOTADB:
        return StoreError(f"the store {path} is not an SQLite database ({reason}): restore it from a backup")
    if sqlite_code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreError(f"the store {path} is in use by another program ({reason}): stop it, then start again")
    # SQLite names a full or read-only disk in many ways (disk I/O error, unable to open): the disk says which.
    disk = disk_of(directory)
    if code == errno.EROFS or (disk is not None and disk.f_flag & os.ST_RDONLY):
        return StoreError(
            f"the store {path} cannot be written: {directory} is on a read-only file system: remount it "
            "read-write, or set [state] dir to a writable directory",
            Refusal.DISK_READ_ONLY,
        )
    if code == errno.ENOSPC or sqlite_code == sqlite3.SQLITE_FULL or (disk is not None and disk.f_bavail == 0):
        return StoreError(
            f"the store {path} cannot be written: the disk holding {directory} is full: free some space, "
            "then start again",
            Refusal.DISK_FULL,
        )
    if code in (errno.EACCES, errno.EPERM) or sqlite_code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM):
        return StoreError(
            f"the store {path} cannot be written ({reason}): let the daemon's user write to {directory} and the file"
        )
    return StoreError(f"the store {path} cannot be used ({reason}): check the file and the disk it is on")


def check_is_ours(path: Path) -> int:
    """The schema version of the uno-launcher store at `path`; StoreError naming why if it is another program's
    database or a newer uno-launcher's. Reads only: a plain connection changes nothing (no WAL switch)."""
    try:
        conn = sqlite3.connect(path)
        try:
            app = conn.execute("PRAGMA application_id").fetchone()[0]
            version: int = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.close()
    except sqlite3.Error as e:
        raise store_failure(path, e) from e
    if app == APPLICATION_ID and version > len(MIGRATIONS):
        raise StoreError(
            f"the store {path} was written by a newer uno-launcher (schema {version}, this one knows "
            f"{len(MIGRATIONS)}): upgrade uno-launcher"
        )
    ours_before_the_stamp = app == 0 and 0 < version < STAMPED_FROM and tables == tables_at(version)
    if app != APPLICATION_ID and not ours_before_the_stamp:
        names = ", ".join(sorted(tables - {"sqlite_sequence"})) or "none"
        raise StoreError(
            f"the store {path} is not an uno-launcher store (an SQLite database with tables: {names}): move "
            "it aside, or set [state] dir to another directory"
        )
    return version


def disk_of(directory: Path) -> os.statvfs_result | None:
    """The file system of the directory, or of its nearest ancestor that exists."""
    for candidate in (directory, *directory.parents):
        with contextlib.suppress(OSError):
            return os.statvfs(candidate)
    return None


def sync_directory(directory: Path) -> None:
    """The new name of a file is on the disk, not only the file."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
