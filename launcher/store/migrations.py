"""The store's schema, built by numbered migrations: entry i moves a store from version i to i + 1 (SQLite's
`user_version`), each in one transaction with its version bump."""

from __future__ import annotations

import functools
import re
import sqlite3

from launcher.store.transactions import transaction

STAMPED_FROM = 8  # the schema version that stamps APPLICATION_ID; older stores of ours are known by their tables

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
    # The history (launcher/table/history.py): a summary of each ended game, each player's line in it, and each player's
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
    # Wear and care (launcher/press/wear.py): the launcher's counters over its life and since the roller was cleaned,
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
    # The table PIN itself, so that any joined phone can show the invite (its QR code carries the PIN anyway); the
    # admin PIN is only ever kept hashed. A store upgraded learns it at the next join with it or change of it.
    """
    CREATE TABLE invite (
        id        INTEGER PRIMARY KEY CHECK (id = 1),
        table_pin TEXT NOT NULL
    );
    """,
    # The table PIN is kept only hashed again (a store and its backups gave it away): the invite carries a token of
    # its own instead, which joins and is revoked by a new one. `digits`: how long a PIN is, so that the admin is
    # told to change a table PIN shorter than new ones may be. The plain PIN's row is deleted with secure_delete on.
    """
    ALTER TABLE pins ADD COLUMN digits INTEGER;
    UPDATE pins SET digits = (SELECT length(table_pin) FROM invite) WHERE role = 'table';
    DELETE FROM invite;
    DROP TABLE invite;
    CREATE TABLE join_token (
        id      INTEGER PRIMARY KEY CHECK (id = 1),
        token   TEXT NOT NULL,
        made_ts REAL NOT NULL
    );
    """,
    # MQTT (launcher/home/mqtt.py): the event log is the outbox; `sent` is the last event the broker acknowledged, so a
    # broker down for an hour (or a restart meanwhile) loses nothing. `presses` counts presses for Home Assistant.
    # Tournaments shared by tables over the broker (launcher/home/tournament.py): the setup and every scored round, by
    # id.
    """
    CREATE TABLE mqtt_outbox (
        id      INTEGER PRIMARY KEY CHECK (id = 1),
        sent    INTEGER NOT NULL,
        presses INTEGER NOT NULL
    );
    CREATE TABLE tournaments (
        id         TEXT PRIMARY KEY,
        setup      TEXT NOT NULL,
        created_ts REAL NOT NULL
    );
    CREATE TABLE tournament_rounds (
        tournament TEXT NOT NULL REFERENCES tournaments (id),
        round      TEXT NOT NULL,
        result     TEXT NOT NULL,
        PRIMARY KEY (tournament, round)
    );
    """,
    # A game's rounds in a table of their own (launcher/store/game_table.py), a row written once as its round is
    # scored: a game saved whole at every press cost a long game's presses more and more. `round` counts from 0.
    # The rounds of the games kept move out of their state; a state an edit or damage made unreadable stays whole.
    """
    CREATE TABLE game_rounds (
        game  INTEGER NOT NULL REFERENCES games (id),
        round INTEGER NOT NULL,
        entry TEXT NOT NULL,
        PRIMARY KEY (game, round)
    );
    CREATE TEMP TABLE whole AS SELECT id, state FROM games
        WHERE CASE WHEN json_valid(state) THEN json_type(state, '$.game.rounds') = 'array' ELSE 0 END;
    INSERT INTO game_rounds (game, round, entry)
        SELECT whole.id, r.key, r.value FROM whole, json_each(whole.state, '$.game.rounds') AS r;
    UPDATE games SET state = json_remove(state, '$.game.rounds') WHERE id IN (SELECT id FROM whole);
    DROP TABLE whole;
    """,
    # A tournament's secret (launcher/home/tournament_wire.py), kept by each table that holds it, set up here or joined
    # with its code; and the tournament this table's admin chose, never one a broker names (an older store keeps
    # its newest as the choice).
    """
    CREATE TABLE tournament_keys (
        tournament TEXT PRIMARY KEY,
        key        TEXT NOT NULL
    );
    CREATE TABLE tournament_choice (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        tournament TEXT NOT NULL
    );
    INSERT INTO tournament_choice (id, tournament)
        SELECT 1, id FROM tournaments ORDER BY created_ts DESC, id LIMIT 1;
    """,
    # The nonces of the tournament asks this table answered (launcher/home/tournament_post.py), so an ask captured on
    # the broker is not answered again after a restart; and the random part of this table's MQTT client id, made
    # once, so a client that knows the table's name cannot take its session (launcher/home/mqtt.py).
    """
    CREATE TABLE tournament_asks (
        nonce TEXT PRIMARY KEY
    );
    CREATE TABLE mqtt_client (
        id     INTEGER PRIMARY KEY CHECK (id = 1),
        random TEXT NOT NULL
    );
    """,
)


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the store of `conn` to the newest schema."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.execute("PRAGMA secure_delete = ON")  # what a migration deletes (a plain PIN) is overwritten, not left free
    for number in range(version, len(MIGRATIONS)):
        # Statement by statement: executescript() would commit before the version bump.
        with transaction(conn):
            for statement in _statements(MIGRATIONS[number]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number + 1}")


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


# One entry per object of a database: (type, name, table it belongs to, its SQL as SQLite keeps it, whitespace
# outside quotes made single spaces). The SQL holds everything that changes what a write may do (columns, types,
# defaults, collations, generated columns, CHECK and foreign keys), so two databases with the same description
# refuse and accept the same writes.
SchemaObject = tuple[str, str, str, str]

# A quoted string or name (kept as it is), a run of whitespace (made one space), or anything else.
_SQL_PART = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]|\s+|[^'"`\[\s]+|.""", re.S)


def normalized_sql(sql: str | None) -> str:
    """`sql` with every run of whitespace outside quotes made one space: how the statement was typed does not
    count, anything it says does."""
    parts = (" " if part.isspace() else part for part in _SQL_PART.findall(sql or ""))
    return "".join(parts).strip()


def schema_of(conn: sqlite3.Connection) -> frozenset[SchemaObject]:
    """Every object in the database (tables, indexes, views, triggers) with its SQL."""
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return frozenset((kind, name, table, normalized_sql(sql)) for kind, name, table, sql in rows)


@functools.cache
def schema_at(version: int) -> frozenset[SchemaObject]:
    """The objects of a store of ours at this schema version, exactly."""
    conn = sqlite3.connect(":memory:")
    try:
        for migration in MIGRATIONS[:version]:
            conn.executescript(migration)
        return schema_of(conn)
    finally:
        conn.close()


def tables_at(version: int) -> frozenset[str]:
    """The tables of a store of ours at this schema version."""
    return frozenset(name for kind, name, _, _ in schema_at(version) if kind == "table")
