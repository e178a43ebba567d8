"""The `wear` table: the launcher's counters over its life and since the roller was cleaned (launcher/press/wear.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from launcher.store.transactions import transaction

# The columns of a wear period, named as its fields.
WEAR_COLUMNS = ("since", "fires", "cards", "jams", "stuck", "timeouts", "motor_ms", "recent")


def load(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """Each period's row ('lifetime', 'cleaning') by column, WEAR_COLUMNS."""
    rows = conn.execute(f"SELECT period, {', '.join(WEAR_COLUMNS)} FROM wear").fetchall()
    return {str(row[0]): dict(zip(WEAR_COLUMNS, row[1:], strict=True)) for row in rows}


def save(conn: sqlite3.Connection, periods: Mapping[str, Mapping[str, Any]]) -> None:
    """Replace the periods' rows, each given by column (WEAR_COLUMNS), in one transaction."""
    columns = ", ".join(f"{name} = :{name}" for name in WEAR_COLUMNS)
    rows = [{**values, "period": period} for period, values in periods.items()]
    with transaction(conn):
        conn.executemany(f"UPDATE wear SET {columns} WHERE period = :period", rows)
