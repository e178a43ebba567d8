"""Whose request a free thread of waitress's serves next: a share of the threads per party, turns fair across
parties, and no thread spent on a connection whose reader has not taken its last answer.

waitress hands a connection (its channel) with requests to a pool of `threads` threads, first come first served,
and a thread that writes more than `outbuf_high_watermark` to a connection whose peer does not read waits for room
there. So a stranger's connections, each with many requests in one packet and reading none, held every thread
(issue #45: 2 of 8 new phones got in, 0 of 8 behind a joined guest's). Here the dispatcher's queue is `Turns`:

- a connection's next request waits (no thread taken) while the answers it has not read fill its buffer; the read
  deadline (launcher/channel.py, `DRAIN_S`) then cuts it off;
- one party (an address, or an IPv6 /64: launcher/channel.py's `party()`) has at most a quarter of the threads
  serving it, event streams aside (the stream gate bounds those, webui/stream.py);
- of the parties waiting, the one that has been served least of late goes first (launcher/fair.py's `Usage`), so a
  new phone waits for no flooder's request, whatever a flood of many addresses keeps sending, and flooders take
  turns.
"""

from __future__ import annotations

from collections import Counter, deque
from typing import Protocol

from waitress.task import ThreadedTaskDispatcher

from launcher.clock import Clock
from launcher.fair import Usage


class Queued(Protocol):
    """A connection as the queue sees it (launcher/channel.py's GuardedChannel)."""

    party: str
    connected: bool
    total_outbufs_len: int

    def service(self) -> None: ...


class Turns:
    """waitress's task queue (`ThreadedTaskDispatcher.queue`: truth, `len`, `append`, `popleft`), fair across
    parties. Its dispatcher's lock guards it."""

    def __init__(self, threads: int, watermark: int, clock: Clock) -> None:
        self.share = max(1, threads // 4)
        self._watermark = watermark
        self._waiting: dict[str, deque[Queued]] = {}
        self._serving: set[Queued] = set()
        self._streaming: set[Queued] = set()  # served for good, counted against no party's share
        self._running: Counter[str] = Counter()
        self._usage = Usage(clock.now)

    def append(self, channel: Queued) -> None:
        queued = self._waiting.setdefault(channel.party, deque())
        if channel not in queued:  # waitress adds a connection once; a second add changes nothing
            queued.append(channel)

    def __bool__(self) -> bool:
        return any(self._ready(queued) is not None for queued in self._waiting.values())

    def __len__(self) -> int:
        """Parties with a connection a thread could serve now (waitress logs when more wait than threads are
        idle)."""
        return sum(self._ready(queued) is not None for queued in self._waiting.values())

    def popleft(self) -> Queued:
        """The next connection to serve: of the parties with one ready, the one served least of late. Asked only
        after `bool()` said yes, under the same lock; a waiting connection only becomes readier meanwhile (the loop
        thread sends what it holds, or it closes: nothing is written to it while it waits)."""
        ready = {p: c for p, queued in self._waiting.items() if (c := self._ready(queued)) is not None}
        party = self._usage.first(list(ready))
        channel = ready[party]
        queued = self._waiting[party]
        queued.remove(channel)
        if not queued:
            del self._waiting[party]
        self._serving.add(channel)
        self._running[party] += 1
        self._usage.served(party)
        return channel

    def streaming(self, channel: Queued) -> None:
        """`channel`'s request is an event stream: it holds its thread, but no longer its party's share."""
        if channel in self._serving and channel not in self._streaming:
            self._streaming.add(channel)
            self._running[channel.party] -= 1

    def done(self, channel: Queued) -> None:
        """`channel`'s request has been served: its thread is free (waitress may add it again for its next)."""
        self._serving.discard(channel)
        if channel in self._streaming:
            self._streaming.discard(channel)
        else:
            self._running[channel.party] -= 1
        if self._running[channel.party] <= 0:
            del self._running[channel.party]

    def _ready(self, queued: deque[Queued]) -> Queued | None:
        """The party's first connection a thread may serve now, if its share has room."""
        if not queued or self._running[queued[0].party] >= self.share:
            return None
        for channel in queued:
            unread = channel.connected and channel.total_outbufs_len > self._watermark
            if channel not in self._serving and not unread:
                return channel
        return None


class FairDispatcher(ThreadedTaskDispatcher):  # type: ignore[misc]  # waitress has no type hints
    """waitress's thread pool, serving from `Turns`; the channel tells it when a request is served, becomes a
    stream, or may be ready again (its reader took its answers, or it closed)."""

    def __init__(self, threads: int, watermark: int, clock: Clock) -> None:
        super().__init__()
        self.queue = self.turns = Turns(threads, watermark, clock)
        self.set_thread_count(threads)

    def done(self, channel: Queued) -> None:
        with self.lock:
            self.turns.done(channel)
            self._wake()

    def streaming(self, channel: Queued) -> None:
        with self.lock:
            self.turns.streaming(channel)
            self._wake()

    def ready(self) -> None:
        with self.lock:
            self._wake()

    def _wake(self) -> None:
        if self.turns:
            self.queue_cv.notify()
