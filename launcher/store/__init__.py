"""SQLite persistence: one file in the state directory, owned by `Store` (database.py), its schema built by
numbered migrations (migrations.py), and each table's queries in a module of its own: functions that take the
connection they run on, so that a caller chooses the transaction and the connection (one per request, as in
Flask's tutorial, or a thread's long-lived `Writer`).

    with store.connect() as conn:
        game_table.current(conn)

The game history's tables are read and written by launcher/table/history.py, which owns them.
"""

from launcher.store.database import (
    APPLICATION_ID,
    STORE_FILE,
    Store,
    StoreError,
    Writer,
    check_is_ours,
    store_failure,
    sync_directory,
)
from launcher.store.migrations import MIGRATIONS
from launcher.store.reading import readable
from launcher.store.transactions import transaction
from launcher.store.write_behind import WriteBehind

__all__ = [
    "APPLICATION_ID",
    "MIGRATIONS",
    "STORE_FILE",
    "Store",
    "StoreError",
    "WriteBehind",
    "Writer",
    "check_is_ours",
    "readable",
    "store_failure",
    "sync_directory",
    "transaction",
]
