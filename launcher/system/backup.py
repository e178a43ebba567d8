"""Backups of the store, and restoring one.

A backup is made with SQLite's online backup, page by page from a consistent snapshot, so it is safe while the
daemon runs and writes. It is one self-contained file (no WAL beside it), checked whole before it takes its name:
a backup that exists is a good one. `--into DIR --keep N` names it by the time and keeps the newest N there, for a
nightly timer.

Restoring replaces the store only when nothing runs on it (the state directory's lock) and only with a file that
is a whole, undamaged store of this project, of this schema or an older one (the next start upgrades it). The
store it replaces is not lost: it is kept beside it as `launcher.sqlite3.before-restore-<time>`. The restored store
hands out event ids only above every id the replaced one had handed out, so a phone that kept the old stream's
last id never takes a new event for one it has seen.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from launcher.store import APPLICATION_ID, STORE_FILE, Store, StoreError, check_is_ours, readable, sync_directory
from launcher.store.database import SQLITE_MAGIC
from launcher.store.migrations import STAMPED_FROM, schema_at, schema_of
from launcher.system.statelock import StateLock

BACKUP_PREFIX = "uno-launcher-"  # what `--into` names its files, and the only files `--keep` removes
BACKUP_SUFFIX = ".sqlite3"
# The largest file restore takes: well above what a table's years of games make (docs/RELIABILITY.md), and a
# bound on what a file handed to it can make it read and copy.
MAX_RESTORE_BYTES = 256 * 2**20


@dataclass(frozen=True, slots=True)
class Copied:
    path: Path
    size: int
    schema: int


def backup(store_path: Path, dest: Path) -> Copied:
    """Copy the store to `dest`, which must not exist yet. Safe while the daemon runs."""
    if not store_path.exists():
        raise StoreError(f"no store at {store_path}: pass the daemon's --config (its [state] dir holds the store)")
    if dest.exists():
        raise StoreError(f"{dest} exists already: give the backup another name (a backup never replaces a file)")
    with readable(store_path) as source:  # a card gone read-only: a copy SQLite can open, its log folded in
        check_is_ours(source)  # refuses, naming why, a file that is not a store of ours
        draft = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
        try:
            _copy(source, draft)
            schema = check_is_ours(draft)
            os.link(draft, dest)  # unlike a rename, never over a file that appeared meanwhile
            sync_directory(dest.parent)
        except FileExistsError:
            raise StoreError(f"{dest} appeared while the backup was made: give the backup another name") from None
        except OSError as e:
            raise StoreError(f"cannot write the backup {dest}: {e.strerror}") from None
        finally:
            with contextlib.suppress(OSError):
                draft.unlink()
    return Copied(dest, dest.stat().st_size, schema)


def backup_into(store_path: Path, directory: Path, *, keep: int, now: float | None = None) -> tuple[Copied, list[Path]]:
    """A backup named by the time in `directory`, then the oldest of ours beyond `keep` removed (returned)."""
    if keep < 1:
        raise StoreError(f"--keep {keep}: keep at least 1 backup")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot make the backup directory {directory}: {e.strerror}") from None
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(time.time() if now is None else now))
    name = f"{BACKUP_PREFIX}{stamp}{BACKUP_SUFFIX}"
    for n in range(2, 100):  # two backups within a second: the second is "…-2"
        if not (directory / name).exists():
            break
        name = f"{BACKUP_PREFIX}{stamp}-{n}{BACKUP_SUFFIX}"
    made = backup(store_path, directory / name)
    taken = {p: at for p in directory.iterdir() if (at := _taken_at(p.name)) is not None}
    ours = sorted(taken, key=taken.__getitem__)
    removed = ours[: max(0, len(ours) - keep)]
    for old in removed:
        old.unlink()
    return made, removed


def _taken_at(name: str) -> tuple[str, int] | None:
    """When one of our backups was taken, as a sort key ("20261201-040312", n), from its name; None if not ours."""
    if not (name.startswith(BACKUP_PREFIX) and name.endswith(BACKUP_SUFFIX)):
        return None
    date, _, rest = name[len(BACKUP_PREFIX) : -len(BACKUP_SUFFIX)].partition("-")
    clock, _, n = rest.partition("-")
    if not (len(date) == 8 and date.isdigit() and len(clock) == 6 and clock.isdigit() and (n == "" or n.isdigit())):
        return None
    return f"{date}-{clock}", int(n or 1)


def restore(
    source: Path, state_dir: Path, *, keep_pins: bool = False, now: float | None = None
) -> tuple[Copied, Path | None]:
    """Make `source` the store of `state_dir`. Returns what was restored and where the replaced store was kept.

    The backup's sessions are dropped (every phone joins again), and the PINs in force stay unless `keep_pins`
    (then the backup's come back); a store with no PINs to keep keeps the backup's."""
    _check_source(source)
    store_path = state_dir / STORE_FILE
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot make the state directory {state_dir}: {e.strerror}") from None
    with StateLock(state_dir):
        draft = store_path.with_name(f"{STORE_FILE}.restoring-{os.getpid()}")
        try:
            _copy(source, draft)
            schema = _check_whole(draft)  # the copy is what is restored: checked again, whatever the source became
            Store(draft)  # upgraded now to this version's schema, so that its event ids can be moved on
            pins = None if keep_pins else _pins_of(store_path)
            kept, handed_out = _keep_aside(store_path, now)
            _sign_everyone_out(draft, pins)
            _reserve_past(draft, handed_out)  # last: it puts the draft back in one file, on the disk
            _own_like(draft, state_dir)
            for suffix in ("-wal", "-shm"):  # the replaced store's (kept aside): a stale WAL must never meet the new
                with contextlib.suppress(FileNotFoundError):
                    store_path.with_name(STORE_FILE + suffix).unlink()
            os.replace(draft, store_path)
            sync_directory(state_dir)
        except OSError as e:
            raise StoreError(f"cannot restore into {state_dir}: {e.strerror}; the store there is unchanged") from None
        finally:
            for leftover in (draft, *(draft.with_name(draft.name + s) for s in ("-wal", "-shm", "-journal"))):
                with contextlib.suppress(OSError):
                    leftover.unlink()
    return Copied(store_path, store_path.stat().st_size, schema), kept


def _keep_aside(store_path: Path, now: float | None) -> tuple[Path | None, int | None]:
    """A byte-for-byte copy of the store about to be replaced, damaged or not, and the event ids it handed out
    (None if it cannot tell)."""
    if not store_path.exists():
        return None, 0
    handed_out: int | None = None
    with contextlib.suppress(sqlite3.Error):
        conn = sqlite3.connect(store_path, isolation_level=None)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # nothing of it left only in the WAL
            last = conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0]
            reserved = conn.execute("SELECT coalesce(max(reserved), 0) FROM event_ids").fetchone()[0]
            handed_out = int(max(last, reserved))
        finally:
            conn.close()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(time.time() if now is None else now))
    kept = store_path.with_name(f"{STORE_FILE}.before-restore-{stamp}")
    if kept.exists():
        raise StoreError(f"{kept} exists already: wait a second and restore again")
    for suffix in ("", "-wal"):  # the WAL too, should the checkpoint have failed on a damaged store
        part = store_path.with_name(STORE_FILE + suffix)
        if part.exists():
            shutil.copyfile(part, kept.with_name(kept.name + suffix))
            with kept.with_name(kept.name + suffix).open("rb") as f:
                os.fsync(f.fileno())
            _own_like(kept.with_name(kept.name + suffix), store_path.parent)
    return kept, handed_out


@dataclass(frozen=True, slots=True)
class _Pins:
    """What lets phones in: the PINs' hashes (role, salt, hash, changed_ts, digits) and the invite's token."""

    hashes: list[tuple[object, ...]]
    join_token: list[tuple[object, ...]]


def _pins_of(store_path: Path) -> _Pins | None:
    """The PINs and the invite of the store about to be replaced (run by this version: of its schema); None if
    it has no PINs or cannot be read."""
    if not store_path.exists():
        return None
    with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(store_path)) as conn:
        hashes = conn.execute("SELECT role, salt, hash, changed_ts, digits FROM pins").fetchall()
        token = conn.execute("SELECT id, token, made_ts FROM join_token").fetchall()
        return _Pins(hashes, token) if hashes else None
    return None


def _sign_everyone_out(path: Path, pins: _Pins | None) -> None:
    """No session of the backup survives (a row planted in it would be someone's cookie); `pins`, if any, replace
    the backup's PINs and invite."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM sessions")
        if pins is not None:
            conn.execute("DELETE FROM pins")
            conn.executemany(
                "INSERT INTO pins (role, salt, hash, changed_ts, digits) VALUES (?, ?, ?, ?, ?)", pins.hashes
            )
            conn.execute("DELETE FROM join_token")
            conn.executemany("INSERT INTO join_token (id, token, made_ts) VALUES (?, ?, ?)", pins.join_token)
        conn.execute("COMMIT")


def _check_source(source: Path) -> None:
    """Refuse, naming why, a file that is not a whole backup of this project's store: before anything is copied."""
    try:
        # Non-blocking: a named pipe must be refused, not waited on for a writer.
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise StoreError(f"there is no file {source}") from None
    except OSError as e:
        raise StoreError(f"cannot read {source}: {e.strerror}") from None
    try:
        kind = os.fstat(fd)
        if stat.S_ISDIR(kind.st_mode):
            raise StoreError(f"{source} is a directory, not a backup file")
        if not stat.S_ISREG(kind.st_mode):
            raise StoreError(f"{source} is not a regular file (a pipe or a device?): give the backup file itself")
        if kind.st_size > MAX_RESTORE_BYTES:
            raise StoreError(
                f"{source} is {kind.st_size / 2**20:,.0f} MiB, more than a store of ours may be "
                f"({MAX_RESTORE_BYTES // 2**20} MiB): it was not restored"
            )
        head = os.read(fd, len(SQLITE_MAGIC))
    finally:
        os.close(fd)
    if head != SQLITE_MAGIC:
        raise StoreError(f"{source} is not a backup of an uno-launcher store: it is not an SQLite database")
    _check_whole(source)


def _check_whole(path: Path) -> int:
    """The schema version of `path` if it is exactly a store of ours at that version and undamaged, else StoreError.
    Exactly: every object's SQL as the migrations make it, both ways, and nothing else (a view or a trigger would
    run in the daemon with the store's rights; a CHECK, a foreign key or a default would refuse or change the
    daemon's writes)."""
    version = check_is_ours(path)
    if version < STAMPED_FROM:
        # Stores before the stamp are told by their tables (check_is_ours); a stamped one is at least this new.
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            stamped = conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        if stamped:
            raise StoreError(f"{path} is not a whole uno-launcher store (schema {version}): it was not restored")
    problems = _integrity(path)
    if problems:
        raise StoreError(f"{path} is damaged ({problems}): it was not restored; try an older backup")
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            found = schema_of(conn)
    except sqlite3.Error as e:
        raise StoreError(f"{path} is damaged ({e}): it was not restored; try an older backup") from None
    expected = schema_at(version)
    first = {"trigger": 0, "view": 1, "table": 2}  # what would run code in the daemon is named first
    extra = sorted(found - expected, key=lambda o: (first.get(o[0], 3), o[1]))
    missing = sorted(expected - found, key=lambda o: (first.get(o[0], 3), o[1]))
    if extra or missing:
        kind, name = (extra or missing)[0][:2]
        if not extra:
            what = f"its {kind} {name!r} is missing"
        elif (kind, name) in {o[:2] for o in expected}:
            what = f"its {kind} {name!r} is not as schema {version} makes it"
        else:
            what = f"it holds a {kind} {name!r} that no uno-launcher makes"
        raise StoreError(f"{path} is not a store as uno-launcher writes it ({what}): it was not restored")
    return version


def _integrity(path: Path) -> str:
    """'' if SQLite finds the file whole; else its first complaint."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA integrity_check(1)")]
        finally:
            conn.close()
    except sqlite3.Error as e:
        return str(e)
    return "" if rows == ["ok"] else rows[0]


def _copy(source: Path, dest: Path) -> None:
    """SQLite's online backup of `source` into a new self-contained file `dest`, on the disk when this returns."""
    dest.unlink(missing_ok=True)
    try:
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        try:
            out = sqlite3.connect(dest)
            try:
                src.backup(out)
                out.execute("PRAGMA journal_mode=DELETE")  # one file: no -wal or -shm needed to read it
            finally:
                out.close()
        finally:
            src.close()
        with dest.open("rb") as f:
            os.fsync(f.fileno())
    except sqlite3.Error as e:
        raise StoreError(f"cannot copy {source} to {dest}: {e}") from None


def _reserve_past(path: Path, handed_out: int | None) -> None:
    """The restored store hands out event ids only above every id the replaced store had handed out; if that is
    unknown (a damaged store), 10,000 past its own, as after a run that never ended."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        if handed_out is None:
            handed_out = conn.execute("SELECT coalesce(max(id), 0) + 10000 FROM events").fetchone()[0]
        conn.execute("UPDATE event_ids SET reserved = max(reserved, ?)", (handed_out,))
        conn.execute("PRAGMA journal_mode=DELETE")  # the WAL that opening it as a store made goes back in the file
    finally:
        conn.close()
    with path.open("rb") as f:
        os.fsync(f.fileno())


def _own_like(path: Path, directory: Path) -> None:
    """Root restoring for the service: the files belong to the state directory's owner, who must write them."""
    if os.geteuid() == 0:
        owner = directory.stat()
        os.chown(path, owner.st_uid, owner.st_gid)
