"""SQLite persistence: one file in the state directory, schema by numbered migrations.

WAL mode; `synchronous=FULL` so that anything a player was told is saved survives a power cut. Connections are
short-lived and per thread (one per request, one for the event writer), as in Flask's tutorial.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from launcher.events import Event

STORE_FILE = "launcher.sqlite3"  # in the state directory

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
)


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with self.connect() as conn:
            self._migrate(conn)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            yield conn
        finally:
            conn.close()

    @staticmethod
    def _migrate(conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise RuntimeError(
                f"the database is schema version {version}, newer than this program knows "
                f"({len(MIGRATIONS)}); upgrade uno-launcher"
            )
        for number in range(version, len(MIGRATIONS)):
            # Statement by statement: executescript() would commit before the version bump.
            with transaction(conn):
                for statement in _statements(MIGRATIONS[number]):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number + 1}")

    # --- events -------------------------------------------------------------------------------------------

    @staticmethod
    def append_events(conn: sqlite3.Connection, events: Iterable[Event]) -> None:
        rows = [(e.id, e.ts, e.type, json.dumps(e.data, ensure_ascii=False)) for e in events]
        with transaction(conn):
            conn.executemany("INSERT INTO events (id, ts, type, data) VALUES (?, ?, ?, ?)", rows)

    @staticmethod
    def events_after(conn: sqlite3.Connection, last_id: int, limit: int) -> list[Event]:
        rows = conn.execute("SELECT id, ts, type, data FROM events WHERE id > ? ORDER BY id LIMIT ?", (last_id, limit))
        return [Event(id=i, ts=ts, type=t, data=json.loads(d)) for i, ts, t, d in rows]

    @staticmethod
    def last_event_id(conn: sqlite3.Connection) -> int:
        return conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0]

    @staticmethod
    def begin_run(conn: sqlite3.Connection) -> bool:
        """Mark the event log in use; True if the last run never ended it (killed, or a power cut)."""
        with transaction(conn):
            killed = conn.execute("SELECT count(*) FROM running").fetchone()[0] > 0
            conn.execute("INSERT OR IGNORE INTO running (id) VALUES (1)")
        return killed

    @staticmethod
    def end_run(conn: sqlite3.Connection) -> None:
        """Every event of this run is saved: the next run numbers on from the log's last id."""
        with transaction(conn):
            conn.execute("DELETE FROM running")

    @staticmethod
    def count_events_after(conn: sqlite3.Connection, type: str, after_id: int) -> int:
        return conn.execute("SELECT count(*) FROM events WHERE type = ? AND id > ?", (type, after_id)).fetchone()[0]

    # --- rounds -------------------------------------------------------------------------------------------

    @staticmethod
    def start_round(
        conn: sqlite3.Connection, number: int, profile: str, seed: str, commitment: str, event_id: int, ts: float
    ) -> None:
        with transaction(conn):
            conn.execute(
                "INSERT INTO rounds (number, profile, seed, commitment, started_event, started_ts) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (number, profile, seed, commitment, event_id, ts),
            )

    @staticmethod
    def end_round(conn: sqlite3.Connection, number: int, record: str, ts: float) -> None:
        with transaction(conn):
            conn.execute("UPDATE rounds SET record = ?, ended_ts = ? WHERE number = ?", (record, ts, number))

    @staticmethod
    def open_round(conn: sqlite3.Connection) -> tuple[int, str, str, int, str] | None:
        """(number, profile, seed, started_event, restarts) of the round not ended yet, if any."""
        return conn.execute(
            "SELECT number, profile, seed, started_event, restarts FROM rounds WHERE ended_ts IS NULL "
            "ORDER BY number DESC"
        ).fetchone()

    @staticmethod
    def set_round_restarts(conn: sqlite3.Connection, number: int, restarts: str) -> None:
        with transaction(conn):
            conn.execute("UPDATE rounds SET restarts = ? WHERE number = ?", (restarts, number))

    @staticmethod
    def last_round_number(conn: sqlite3.Connection) -> int:
        return conn.execute("SELECT coalesce(max(number), 0) FROM rounds").fetchone()[0]

    @staticmethod
    def round_record(conn: sqlite3.Connection, number: int) -> tuple[str, bool] | None:
        """(record, ended) of a round, or None."""
        row = conn.execute("SELECT record, ended_ts IS NOT NULL FROM rounds WHERE number = ?", (number,)).fetchone()
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
        return conn.execute("SELECT id, state FROM games ORDER BY id DESC LIMIT 1").fetchone()

    # --- the deck in the hopper ----------------------------------------------------------------------------

    @staticmethod
    def deck(conn: sqlite3.Connection) -> tuple[int, int] | None:
        """(loaded, dispensed) as last saved, or None on a first start."""
        return conn.execute("SELECT loaded, dispensed FROM deck WHERE id = 1").fetchone()

    @staticmethod
    def save_deck(conn: sqlite3.Connection, loaded: int, dispensed: int) -> None:
        with transaction(conn):
            conn.execute(
                "INSERT INTO deck (id, loaded, dispensed) VALUES (1, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET loaded = excluded.loaded, dispensed = excluded.dispensed",
                (loaded, dispensed),
            )

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


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE … COMMIT, or ROLLBACK if the block raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
