"""Where the store lives: a store on a file system kept in memory is gone at the next boot.

Raspberry Pi OS's overlay file system (raspi-config → Performance Options → Overlay File System) keeps every change
to the root in RAM, so a store left on the root works all evening and is forgotten, PINs and history with it, at
the next boot (docs/HARDWARE.md, "The SD card: what it is written, and a read-only root"). The daemon says so in
its log at each start; it still runs (a test or a demo may want a store in RAM).
"""

from __future__ import annotations

from pathlib import Path

MOUNTINFO = Path("/proc/self/mountinfo")
IN_MEMORY = ("overlay", "tmpfs", "ramfs")  # file systems whose files do not outlive a boot


def file_system_of(path: Path, mountinfo: str | None = None) -> str | None:
    """The type of the file system holding `path` (made or not yet), from
    the kernel's mount table (`mountinfo`: its text, read from /proc when None); None if it cannot be told."""
    if mountinfo is None:
        try:
            mountinfo = MOUNTINFO.read_text()
        except OSError:
            return None
    place = path.resolve()  # links followed as far as the path exists: a directory not made yet is its parent's
    best: tuple[int, str] | None = None
    for line in mountinfo.splitlines():
        before, _, after = line.partition(" - ")
        fields, kind = before.split(), after.split()
        if len(fields) < 5 or not kind:
            continue
        point = Path(fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\"))
        if (point == place or point in place.parents) and (best is None or len(point.parts) >= best[0]):
            best = (len(point.parts), kind[0])  # the deepest mount holding it; the last one mounted there wins
    return None if best is None else best[1]


def kept_in_memory(path: Path, mountinfo: str | None = None) -> str | None:
    """A sentence for the log when the store at `path` is on a file system kept in memory; else None."""
    kind = file_system_of(path, mountinfo)
    if kind not in IN_MEMORY:
        return None
    return (
        f"the store {path} is on a file system kept in memory ({kind}): everything in it (games, history, PINs) is "
        "gone at the next boot; with raspi-config's overlay file system on, set [state] dir to a writable partition "
        "(docs/HARDWARE.md, a read-only root)"
    )
