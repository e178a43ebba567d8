"""One daemon per state directory: a lock on the directory itself, held for the daemon's whole life.

Two daemons on one store would hand out the same event ids and each keep its own game in memory, saving over the
other's. The lock is `flock` on the directory (no file of its own, so the directory holds only the store): the
kernel drops it when the process ends, however it ends (even `kill -9`), so a crashed daemon never leaves a stale
lock behind. `restore` takes the same lock, so it never replaces the store under a running daemon.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from launcher.errors import LauncherError

PROC_LOCKS = Path("/proc/locks")  # the kernel's list of locks, with the process holding each


class StateDirBusy(LauncherError, RuntimeError):
    """Another process holds the state directory; the message names it and what to do."""


class StateLock:
    """The state directory's lock, taken on creation; `close()` (or the end of a `with`) releases it."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        try:
            self._fd: int | None = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            raise StateDirBusy(f"cannot open the state directory {directory} ({e.strerror})") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self._holder()
            self.close()
            raise StateDirBusy(
                f"another uno-launcher{holder} is using the state directory {directory}: stop it first "
                "(sudo systemctl stop uno-launcher, or Ctrl-C where it runs), or give this one another [state] dir"
            ) from None

    def _holder(self) -> str:
        """' (process N)' for the process holding the lock, as the kernel lists it; '' if it cannot tell."""
        assert self._fd is not None
        seen = os.fstat(self._fd)
        ours = f"{os.major(seen.st_dev):02x}:{os.minor(seen.st_dev):02x}:{seen.st_ino}"
        try:
            lines = PROC_LOCKS.read_text().splitlines()
        except OSError:
            return ""
        for line in lines:
            fields = line.split()  # "1: FLOCK ADVISORY WRITE <pid> <major:minor:inode> <start> <end>"
            if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == ours:
                return f" (process {fields[4]})"
        return ""

    def close(self) -> None:
        """Release the lock. Safe to call twice."""
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor of the open directory releases its flock
            self._fd = None

    def __enter__(self) -> StateLock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
