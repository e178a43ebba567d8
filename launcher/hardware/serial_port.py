"""The byte pipe under the serial link: a port, and the keeper that holds it open and reads it.

`PortKeeper` opens the port (again, by the same `/dev/serial/by-id/` path, after the board was unplugged), reads it
on its own thread and hands every frame on. Each opening has a generation number, so that nothing written for
one opening ever reaches the next. Its waits run on the injected clock; a pyserial port's read blocks on real I/O
for at most READ_TIMEOUT_S, so only a port whose reads wait on the clock (as the tests' in-memory one does) runs
on a virtual clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

import serial

from launcher.clock import Clock
from launcher.hardware import framing
from launcher.threads import StoppableThread

READ_TIMEOUT_S = 0.05
WRITE_TIMEOUT_S = 0.5
REOPEN_S = 0.5  # between attempts to open the port


class Port(Protocol):
    """An open connection to the board. Every method may raise OSError once the board has gone."""

    def read(self) -> bytes:
        """Some bytes, or b"" after a short wait with nothing to read or after cancel_read()."""
        ...

    def write(self, data: bytes) -> None: ...

    def cancel_read(self) -> None:
        """Make a read in progress on another thread return at once."""
        ...

    def close(self) -> None: ...


Opener = Callable[[], Port]


class SerialPort:
    """A tty (USB CDC or a USB-serial adapter) through pyserial, opened exclusively: a second daemon, or a terminal
    left open, must not share the board."""

    def __init__(self, path: str, baudrate: int) -> None:
        self._serial = serial.Serial(
            path, baudrate, timeout=READ_TIMEOUT_S, write_timeout=WRITE_TIMEOUT_S, exclusive=True
        )
        try:
            self._serial.reset_input_buffer()  # presses and events from before this host was listening are stale
            self._serial.write(b"\n")  # ends any half line the board's parser holds
        except BaseException:  # re-raised: only the port is closed on the way, whatever ended the opening
            self._serial.close()
            raise

    def read(self) -> bytes:
        return bytes(self._serial.read(self._serial.in_waiting or 1))

    def write(self, data: bytes) -> None:
        self._serial.write(data)

    def cancel_read(self) -> None:
        self._serial.cancel_read()

    def close(self) -> None:
        self._serial.close()


def wait_for(cond: threading.Condition, clock: Clock, done: Callable[[], bool], timeout: float | None) -> bool:
    """With `cond` held: wait until done() or until `timeout` seconds of `clock` time have passed.

    Condition.wait_for would measure the timeout on the real monotonic clock, whatever clock the condition's
    waits run on.
    """
    deadline = None if timeout is None else clock.now() + timeout
    while not done():
        left = None if deadline is None else deadline - clock.now()
        if left is not None and left <= 0:
            return False
        cond.wait(left)
    return True


class PortKeeper:
    """Holds the port open and reads it on the `serial-reader` thread. State guarded by `cond`, shared with the link."""

    def __init__(
        self,
        opener: Opener,
        *,
        name: str,
        cond: threading.Condition,
        clock: Clock,
        on_frame: Callable[[framing.Frame], None],
        on_unavailable: Callable[[str], None],
    ) -> None:
        self.name = name  # the port's path, for messages
        self._opener = opener
        self._cond = cond
        self._clock = clock
        self._on_frame = on_frame  # on the reader thread, without the lock
        self._on_unavailable = on_unavailable  # called with why the port cannot be opened
        self._write_lock = threading.Lock()  # one writer at a time, and never onto a port being closed
        self.port: Port | None = None
        self.generation = 0  # one per opening
        self._error = ""  # why the last opening ended
        self._dropped: tuple[int, str] | None = None  # (generation, why): the link asks to close that opening
        self._bad = 0  # from parsers of earlier openings
        self._parser = framing.Parser()
        self._thread = StoppableThread(self._run, "serial-reader", clock=clock, wake=self._wake)

    def start(self) -> None:
        self._thread.start()

    @property
    def bad_frames(self) -> int:
        return self._bad + self._parser.bad

    def trouble(self, generation: int) -> str | None:
        """With the lock held: why this opening can no longer be used, or None while it serves."""
        if self._dropped is not None and self._dropped[0] == generation:
            return self._dropped[1]
        if self.generation != generation or self.port is None:
            return self._error or f"{self.name} was closed"
        return None

    def write(self, generation: int, line: bytes) -> bool:
        """Write to this opening; False if it has gone, or cannot take the line (and is then dropped)."""
        with self._write_lock:
            with self._cond:
                port = self.port if self.generation == generation else None
            if port is None:
                return False
            try:
                port.write(line)
            except (OSError, ValueError, TypeError) as e:
                self.drop(generation, f"cannot write to {self.name}: {e}")  # as good as gone: open it again
                return False
        return True

    def drop(self, generation: int, why: str) -> None:
        """Have the reader close this opening and open the port again."""
        with self._cond:
            if self._dropped is None or self._dropped[0] != generation:
                self._dropped = (generation, why)
            port = self.port if self.generation == generation else None
            self._cond.notify_all()
        if port is not None:
            port.cancel_read()

    def close(self) -> None:
        self._thread.stop()

    def _wake(self) -> None:
        with self._write_lock, self._cond:  # the reader closes ports under the write lock
            self._cond.notify_all()
            if self.port is not None:
                self.port.cancel_read()  # wakes the reader now rather than at its read timeout

    def _run(self) -> None:
        port: Port | None = None
        try:
            while True:
                with self._cond:
                    if self._thread.stopping.is_set():
                        return
                    dropped = self.trouble(self.generation) if port is not None else None
                if port is None:
                    port = self._open()
                    continue
                try:
                    if dropped is not None:
                        raise OSError(dropped)
                    data = port.read()
                except (OSError, ValueError, TypeError) as e:
                    self._closed(port, f"lost the board on {self.name}: {e}")
                    port = None
                    continue
                for frame in self._parser.feed(data):
                    self._on_frame(frame)
        finally:
            if port is not None:
                self._closed(port, "closed")

    def _open(self) -> Port | None:
        try:
            port = self._opener()
        except (OSError, ValueError) as e:
            self._on_unavailable(f"cannot open {self.name}: {e}")
            with self._cond:
                wait_for(self._cond, self._clock, self._thread.stopping.is_set, REOPEN_S)
            return None
        with self._cond:
            self._bad += self._parser.bad
            self._parser = framing.Parser()
            self.port = port
            self.generation += 1
            self._error = ""
            self._cond.notify_all()
        return port

    def _closed(self, port: Port, why: str) -> None:
        with self._write_lock:
            port.close()
        with self._cond:
            if self.port is port:
                self.port = None
                self._error = why
                self._cond.notify_all()
