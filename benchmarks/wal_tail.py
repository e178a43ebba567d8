"""The write-ahead log of an SQLite database in WAL mode, read as it grows: each frame's page, each commit, each
restart of the log after a checkpoint, and the 4 KiB blocks the commits made the disk write.

A frame is a 24-byte header (the page's number, for the last frame of a commit the database's size, the log's two
salts) and the page. The log restarts from its beginning with new salts after a checkpoint, so a frame is read as
the log's own only if its salts are the header's. `read()` is called between the writer's commits (or often
enough that no two restarts fall between two calls); pages are named after the run (`tables()`), from `dbstat`.
"""

from __future__ import annotations

import contextlib
import sqlite3
import struct
from collections import Counter
from pathlib import Path

HEADER = 32  # the log's own header
FRAME_HEADER = 24
BLOCK = 4096  # the file system's block: what a commit's sync writes at the least


class WalTail:
    def __init__(self, wal: Path) -> None:
        self.wal = wal
        self.pages: Counter[int] = Counter()  # frames written, by page number
        self.frames = 0
        self.commits = 0
        self.restarts = 0  # the log started again from its beginning: a checkpoint had copied it all
        self.blocks = 0  # 4 KiB blocks each commit's frames touched (a block two commits share is written twice)
        self._salts: bytes | None = None
        self._offset = HEADER
        self._commit_start = HEADER

    def read(self) -> None:
        """Count the frames written since the last call."""
        try:
            with self.wal.open("rb") as f:
                header = f.read(HEADER)
                if len(header) < HEADER:
                    return
                page_size = struct.unpack(">I", header[8:12])[0]
                if header[16:24] != self._salts:
                    if self._salts is not None:
                        self.restarts += 1
                    self._salts, self._offset, self._commit_start = header[16:24], HEADER, HEADER
                f.seek(self._offset)
                while len(frame := f.read(FRAME_HEADER)) == FRAME_HEADER and frame[8:16] == self._salts:
                    if len(f.read(page_size)) < page_size:
                        break  # being written: read it next time
                    page, size = struct.unpack(">II", frame[:8])
                    self.pages[page] += 1
                    self.frames += 1
                    self._offset += FRAME_HEADER + page_size
                    if size:  # the last frame of a commit
                        self.commits += 1
                        self.blocks += (self._offset - 1) // BLOCK - self._commit_start // BLOCK + 1
                        self._commit_start = self._offset
        except FileNotFoundError:
            return

    def tables(self, database: Path) -> Counter[str]:
        """The frames counted, by the table (with its indexes) whose page each was at the end; pages no table holds
        then are 'free pages'."""
        owner: dict[int, str] = {}
        with contextlib.closing(sqlite3.connect(database)) as conn:
            table_of = dict(conn.execute("SELECT name, tbl_name FROM sqlite_schema"))
            for name, page in conn.execute("SELECT name, pageno FROM dbstat"):
                owner[page] = table_of.get(name, name)
        named: Counter[str] = Counter()
        for page, count in self.pages.items():
            named[owner.get(page, "free pages")] += count
        return named
