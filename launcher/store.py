"""SQLite persistence: one file in the state directory, schema by numbered migrations.

WAL mode; `synchronous=FULL` so that anything a player was told is saved survives a power cut. Connections are
short-lived and per thread (one per request, one for the event writer), as in Flask's tutorial.

A file at the store's path is used only if it is an uno-launcher store; anything else (empty, not SQLite, damaged,
another program's, a newer schema) is refused with a `StoreError` and left as it is, never replaced. A new store is
made whole beside its path and moved into place, so the path never holds a half-made one.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import sqlite3
import stat
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from launcher.errors import LauncherError

STORE_FILE = "launcher.sqlite3"  # in the state directory
APPLICATION_ID = 0x554E4F4C  # "UNOL", in the SQLite header (PRAGMA application_id): the file is an uno-launcher store
STAMPED_FROM = 8  # the schema version that stamps APPLICATION_ID; older stores of ours are known by their tables
SQLITE_MAGIC = b"SQLite format 3\x00"

StoredEvent = tuple[int, float, str, dict[str, Any]]  # (id, ts, type, data)
# The columns of a wear period (launcher/wear.py), named as its fields.
WEAR_COLUMNS = ("since", "fires", "cards", "jams", "stuck", "timeouts", "motor_ms", "recent")

# Each entry moves the schema from version i to i + 1 (PRAGMA user_version). Never edit one that has shipped.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE events (
        id   INTEGER PRIMARY KEY,
        ts   REAL NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL
    );
    """,
    """
    CREATE TABLE rounds (
        number        INTEGER PRIMARY KEY,
        profile       TEXT NOT NULL,
        seed          TEXT NOT NULL,
        commitment    TEXT NOT NULL,
        started_event INTEGER NOT NULL,
        started_ts    REAL NOT NULL,
        ended_ts      REAL,
        record        TEXT
    );
    """,
    """
    ALTER TABLE rounds ADD COLUMN restarts TEXT NOT NULL DEFAULT '[]';
    """,
    """
    CREATE TABLE games (
        id         INTEGER PRIMARY KEY,
        state      TEXT NOT NULL,
        started_ts REAL NOT NULL
    );
    """,
    """
    CREATE TABLE deck (
        id        INTEGER PRIMARY KEY CHECK (id = 1),
        loaded    INTEGER NOT NULL,
        dispensed INTEGER NOT NULL
    );
    """,
    """
    CREATE TABLE running (
        id INTEGER PRIMARY KEY CHECK (id = 1)
    );
    """,
    """
    CREATE TABLE pins (
        role       TEXT PRIMARY KEY,
        salt       BLOB NOT NULL,
        hash       BLOB NOT NULL,
        changed_ts REAL NOT NULL
    );
    CREATE TABLE sessions (
        digest     TEXT PRIMARY KEY,
        role       INTEGER NOT NULL,
        created_ts REAL NOT NULL,
        seen_ts    REAL NOT NULL
    );
    """,
    # `reserved`: no event id above it was handed out (launcher/events.py). Carried over from the rule it replaces:
    # after a run that never ended (`running`), ids went on 10,000 past the log. 1431195468 is APPLICATION_ID.
    """
    CREATE TABLE event_ids (
        id       INTEGER PRIMARY KEY CHECK (id = 1),
        reserved INTEGER NOT NULL
    );
    INSERT INTO event_ids (id, reserved)
        SELECT 1, coalesce(max(id), 0) + CASE WHEN EXISTS (SELECT 1 FROM running) THEN 10000 ELSE 0 END FROM events;
    DROP TABLE running;
    PRAGMA application_id = 1431195468;
    """,
    # The launcher's rounds became shuffles (the game keeps its rounds): the table, and the events of the log that
    # a resumed shuffle and the phones' streams read. Stored records keep the format they were revealed in.
    """
    ALTER TABLE rounds RENAME TO shuffles;
    UPDATE events SET type = 'shuffle.' || substr(type, 7),
                      data = json_set(json_remove(data, '$.round'), '$.shuffle', json_extract(data, '$.round'))
        WHERE type IN ('round.started', 'round.ended', 'round.contributed');
    """,
    # The hopper's count was called the deck (a deck is the game's cards): its table and its events.
    """
    ALTER TABLE deck RENAME TO hopper;
    UPDATE events SET type = 'hopper.' || substr(type, 6) WHERE type IN ('deck.changed', 'deck.reloaded');
    """,
    # The history (launcher/history.py): a summary of each ended game, each player's line in it, and each player's
    # sums per mode ('*': all) and period ('all', or a month 'YYYY-MM'), so that lists and leaderboards read a few
    # rows whatever the number of games. Games kept before are summarized at the next start.
    """
    CREATE TABLE game_summaries (
        game       INTEGER PRIMARY KEY REFERENCES games (id),
        started_ts REAL NOT NULL,
        ended_ts   REAL NOT NULL,
        outcome    TEXT NOT NULL,
        mode       TEXT NOT NULL,
        ruleset    TEXT NOT NULL,
        target     INTEGER NOT NULL,
        rounds     INTEGER NOT NULL,
        players    TEXT NOT NULL,
        winners    TEXT NOT NULL,
        totals     TEXT NOT NULL
    );
    CREATE TABLE player_games (
        game            INTEGER NOT NULL REFERENCES game_summaries (game),
        player          TEXT NOT NULL,
        name            TEXT NOT NULL,
        mode            TEXT NOT NULL,
        started_ts      REAL NOT NULL,
        month           TEXT NOT NULL,
        won             INTEGER NOT NULL,
        rounds          INTEGER NOT NULL,
        rounds_won      INTEGER NOT NULL,
        hand_points     INTEGER NOT NULL,
        presses         INTEGER NOT NULL,
        cards           INTEGER NOT NULL,
        longest_drought INTEGER,
        PRIMARY KEY (game, player)
    );
    CREATE INDEX player_games_by_start ON player_games (started_ts);
    CREATE INDEX player_games_by_player ON player_games (player);
    CREATE TABLE player_totals (
        mode            TEXT NOT NULL,
        period          TEXT NOT NULL,
        player          TEXT NOT NULL,
        name            TEXT NOT NULL,
        last_ts         REAL NOT NULL,
        games           INTEGER NOT NULL,
        wins            INTEGER NOT NULL,
        rounds          INTEGER NOT NULL,
        rounds_won      INTEGER NOT NULL,
        hand_points     INTEGER NOT NULL,
        presses         INTEGER NOT NULL,
        cards           INTEGER NOT NULL,
        longest_drought INTEGER,
        PRIMARY KEY (mode, period, player)
    );
    """,
    # Wear and care (launcher/wear.py): the launcher's counters over its life and since the roller was cleaned,
    # counted from this upgrade on; `recent` holds how each of the latest fires ended, a letter each.
    """
    CREATE TABLE wear (
        period   TEXT PRIMARY KEY CHECK (period IN ('lifetime', 'cleaning')),
        since    REAL NOT NULL,
        fires    INTEGER NOT NULL DEFAULT 0,
        cards    INTEGER NOT NULL DEFAULT 0,
        jams     INTEGER NOT NULL DEFAULT 0,
        stuck    INTEGER NOT NULL DEFAULT 0,
        timeouts INTEGER NOT NULL DEFAULT 0,
        motor_ms INTEGER NOT NULL DEFAULT 0,
        recent   TEXT NOT NULL DEFAULT ''
    );
    INSERT INTO wear (period, since) VALUES
        ('lifetime', CAST(strftime('%s', 'now') AS REAL)), ('cleaning', CAST(strftime('%s', 'now') AS REAL));
    """,
)


class StoreError(LauncherError, RuntimeError):
    """The store cannot be used; the message names the file and what to do, in one line for the console."""


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._check_file()
        with self.connect() as conn:
            self._migrate(conn)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        """A connection; an SQLite failure in the block comes out as a StoreError saying what it means."""
        conn = self._open()
        try:
            yield conn
        except sqlite3.Error as e:
            raise self._failure(e) from e
        finally:
            conn.close()

    def writer(self) -> Writer:
        """A long-lived connection for one thread that writes often (see `Writer`)."""
        return Writer(self)

    def _open(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as e:
            raise self._failure(e) from e
        return conn

    @staticmethod
    def _migrate(conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        for number in range(version, len(MIGRATIONS)):
            # Statement by statement: executescript() would commit before the version bump.
            with transaction(conn):
                for statement in _statements(MIGRATIONS[number]):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number + 1}")

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
                self._migrate(conn)
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
        return store_failure(self.path, error)

    # --- events -------------------------------------------------------------------------------------------

    @staticmethod
    def append_events(conn: sqlite3.Connection, events: Iterable[StoredEvent], reserve: int | None = None) -> None:
        """Save events and, if given, the new reserved id (see `reserved_event_ids`), in one transaction."""
        rows = [(i, ts, t, json.dumps(data, ensure_ascii=False)) for i, ts, t, data in events]
        with transaction(conn):
            conn.executemany("INSERT INTO events (id, ts, type, data) VALUES (?, ?, ?, ?)", rows)
            if reserve is not None:
                conn.execute("UPDATE event_ids SET reserved = ?", (reserve,))

    @staticmethod
    def events_after(conn: sqlite3.Connection, last_id: int, limit: int) -> list[StoredEvent]:
        rows = conn.execute("SELECT id, ts, type, data FROM events WHERE id > ? ORDER BY id LIMIT ?", (last_id, limit))
        return [(i, ts, t, json.loads(d)) for i, ts, t, d in rows]

    @staticmethod
    def last_event_id(conn: sqlite3.Connection) -> int:
        return int(conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0])

    @staticmethod
    def reserved_event_ids(conn: sqlite3.Connection) -> int:
        """No event id above this was handed out: the next run numbers on past it."""
        return int(conn.execute("SELECT reserved FROM event_ids").fetchone()[0])

    @staticmethod
    def reserve_event_ids(conn: sqlite3.Connection, up_to: int) -> None:
        with transaction(conn):
            conn.execute("UPDATE event_ids SET reserved = ?", (up_to,))

    @staticmethod
    def count_events_after(conn: sqlite3.Connection, type: str, after_id: int) -> int:
        row = conn.execute("SELECT count(*) FROM events WHERE type = ? AND id > ?", (type, after_id)).fetchone()
        return int(row[0])

    # --- shuffles -----------------------------------------------------------------------------------------

    @staticmethod
    def start_shuffle(
        conn: sqlite3.Connection, number: int, profile: str, seed: str, commitment: str, event_id: int, ts: float
    ) -> None:
        with transaction(conn):
            conn.execute(
                "INSERT INTO shuffles (number, profile, seed, commitment, started_event, started_ts) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (number, profile, seed, commitment, event_id, ts),
            )

    @staticmethod
    def end_shuffle(conn: sqlite3.Connection, number: int, record: str, ts: float) -> None:
        with transaction(conn):
            conn.execute("UPDATE shuffles SET record = ?, ended_ts = ? WHERE number = ?", (record, ts, number))

    @staticmethod
    def open_shuffle(conn: sqlite3.Connection) -> tuple[int, str, str, int, str] | None:
        """(number, profile, seed, started_event, restarts) of the shuffle not ended yet, if any."""
        row: tuple[int, str, str, int, str] | None = conn.execute(
            "SELECT number, profile, seed, started_event, restarts FROM shuffles WHERE ended_ts IS NULL "
            "ORDER BY number DESC"
        ).fetchone()
        return row

    @staticmethod
    def set_shuffle_restarts(conn: sqlite3.Connection, number: int, restarts: str) -> None:
        with transaction(conn):
            conn.execute("UPDATE shuffles SET restarts = ? WHERE number = ?", (restarts, number))

    @staticmethod
    def last_shuffle_number(conn: sqlite3.Connection) -> int:
        return int(conn.execute("SELECT coalesce(max(number), 0) FROM shuffles").fetchone()[0])

    @staticmethod
    def shuffles_between(conn: sqlite3.Connection, start_ts: float, end_ts: float) -> list[int]:
        """The numbers of the shuffles played at some time from `start_ts` to `end_ts`, in order."""
        rows = conn.execute(
            "SELECT number FROM shuffles WHERE started_ts <= ? AND coalesce(ended_ts, ?) >= ? ORDER BY number",
            (end_ts, end_ts, start_ts),
        )
        return [int(number) for (number,) in rows]

    @staticmethod
    def shuffle_record(conn: sqlite3.Connection, number: int) -> tuple[str, bool] | None:
        """(record, ended) of a shuffle, or None."""
        row = conn.execute("SELECT record, ended_ts IS NOT NULL FROM shuffles WHERE number = ?", (number,)).fetchone()
        return None if row is None else (row[0], bool(row[1]))

    # --- games --------------------------------------------------------------------------------------------

    @staticmethod
    def new_game(conn: sqlite3.Connection, state: str, ts: float) -> int:
        """A new current game (the newest is current); its id."""
        with transaction(conn):
            return conn.execute("INSERT INTO games (state, started_ts) VALUES (?, ?)", (state, ts)).lastrowid or 0

    @staticmethod
    def save_game(conn: sqlite3.Connection, game_id: int, state: str) -> None:
        with transaction(conn):
            conn.execute("UPDATE games SET state = ? WHERE id = ?", (state, game_id))

    @staticmethod
    def current_game(conn: sqlite3.Connection) -> tuple[int, str] | None:
        row = conn.execute("SELECT id, state FROM games ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    @staticmethod
    def games_from(conn: sqlite3.Connection, first: int, limit: int) -> list[tuple[int, float, str]]:
        """(id, started_ts, state) of up to `limit` games from id `first` on, in order."""
        rows = conn.execute(
            "SELECT id, started_ts, state FROM games WHERE id >= ? ORDER BY id LIMIT ?", (first, limit)
        ).fetchall()
        return [(int(i), float(ts), str(state)) for i, ts, state in rows]

    # --- the hopper's count -------------------------------------------------------------------------------

    @staticmethod
    def hopper(conn: sqlite3.Connection) -> tuple[int, int] | None:
        """(loaded, dispensed) as last saved, or None on a first start."""
        row = conn.execute("SELECT loaded, dispensed FROM hopper WHERE id = 1").fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    @staticmethod
    def save_hopper(conn: sqlite3.Connection, loaded: int, dispensed: int) -> None:
        with transaction(conn):
            conn.execute(
                "INSERT INTO hopper (id, loaded, dispensed) VALUES (1, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET loaded = excluded.loaded, dispensed = excluded.dispensed",
                (loaded, dispensed),
            )

    # --- wear and care (launcher/wear.py) ------------------------------------------------------------------

    @staticmethod
    def wear(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
        """Each period's row ('lifetime', 'cleaning') by column, WEAR_COLUMNS."""
        rows = conn.execute(f"SELECT period, {', '.join(WEAR_COLUMNS)} FROM wear").fetchall()
        return {str(row[0]): dict(zip(WEAR_COLUMNS, row[1:], strict=True)) for row in rows}

    @staticmethod
    def save_wear(conn: sqlite3.Connection, periods: Mapping[str, Mapping[str, Any]]) -> None:
        """Replace the periods' rows, each given by column (WEAR_COLUMNS), in one transaction."""
        columns = ", ".join(f"{name} = :{name}" for name in WEAR_COLUMNS)
        rows = [{**values, "period": period} for period, values in periods.items()]
        with transaction(conn):
            conn.executemany(f"UPDATE wear SET {columns} WHERE period = :period", rows)

    # --- PINs and sessions (launcher/access.py) ------------------------------------------------------------

    @staticmethod
    def pin_hashes(conn: sqlite3.Connection) -> list[tuple[str, bytes, bytes]]:
        """(role, salt, hash) of each PIN set."""
        return conn.execute("SELECT role, salt, hash FROM pins").fetchall()

    @staticmethod
    def save_pin_hash(conn: sqlite3.Connection, role: str, salt: bytes, digest: bytes, ts: float) -> None:
        with transaction(conn):
            conn.execute(
                "INSERT INTO pins (role, salt, hash, changed_ts) VALUES (?, ?, ?, ?) ON CONFLICT (role) DO UPDATE "
                "SET salt = excluded.salt, hash = excluded.hash, changed_ts = excluded.changed_ts",
                (role, salt, digest, ts),
            )

    @staticmethod
    def forget_pin_hashes(conn: sqlite3.Connection, roles: Iterable[str]) -> None:
        with transaction(conn):
            conn.executemany("DELETE FROM pins WHERE role = ?", [(role,) for role in roles])

    @staticmethod
    def sessions(conn: sqlite3.Connection) -> list[tuple[str, int, float]]:
        """(digest, role, seen_ts) of every session."""
        return conn.execute("SELECT digest, role, seen_ts FROM sessions").fetchall()

    @staticmethod
    def open_session(conn: sqlite3.Connection, digest: str, role: int, ts: float, *, ended: Iterable[str]) -> None:
        with transaction(conn):
            conn.executemany("DELETE FROM sessions WHERE digest = ?", [(d,) for d in ended])
            conn.execute(
                "INSERT INTO sessions (digest, role, created_ts, seen_ts) VALUES (?, ?, ?, ?)", (digest, role, ts, ts)
            )

    @staticmethod
    def session_seen(conn: sqlite3.Connection, digest: str, ts: float) -> None:
        with transaction(conn):
            conn.execute("UPDATE sessions SET seen_ts = ? WHERE digest = ?", (ts, digest))

    @staticmethod
    def end_sessions(conn: sqlite3.Connection, digests: Iterable[str]) -> None:
        with transaction(conn):
            conn.executemany("DELETE FROM sessions WHERE digest = ?", [(d,) for d in digests])

    @staticmethod
    def forget_sessions_seen_before(conn: sqlite3.Connection, ts: float) -> None:
        with transaction(conn):
            conn.execute("DELETE FROM sessions WHERE seen_ts < ?", (ts,))


class Writer:
    """One connection kept open for a thread that writes often, such as the hopper's count as each card leaves:
    opening a connection and reading the schema costs several times the write itself. For one thread at a time;
    after a failure the connection is closed and the next write opens a new one."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._conn: sqlite3.Connection | None = None

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        if self._conn is None:
            self._conn = self._store._open()
        try:
            yield self._conn
        except sqlite3.Error as e:
            self.close()
            raise self._store._failure(e) from e

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
    disk = _disk(directory)
    if code == errno.EROFS or (disk is not None and disk.f_flag & os.ST_RDONLY):
        return StoreError(
            f"the store {path} cannot be written: {directory} is on a read-only file system: remount it "
            "read-write, or set [state] dir to a writable directory"
        )
    if code == errno.ENOSPC or sqlite_code == sqlite3.SQLITE_FULL or (disk is not None and disk.f_bavail == 0):
        return StoreError(
            f"the store {path} cannot be written: the disk holding {directory} is full: free some space, "
            "then start again"
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
    ours_before_the_stamp = app == 0 and 0 < version < STAMPED_FROM and tables == _tables_at(version)
    if app != APPLICATION_ID and not ours_before_the_stamp:
        names = ", ".join(sorted(tables - {"sqlite_sequence"})) or "none"
        raise StoreError(
            f"the store {path} is not an uno-launcher store (an SQLite database with tables: {names}): move "
            "it aside, or set [state] dir to another directory"
        )
    return version


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


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


@functools.cache
def _tables_at(version: int) -> frozenset[str]:
    """The tables of a store of ours at this schema version."""
    conn = sqlite3.connect(":memory:")
    try:
        for migration in MIGRATIONS[:version]:
            conn.executescript(migration)
        return frozenset(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    finally:
        conn.close()


def _disk(directory: Path) -> os.statvfs_result | None:
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
