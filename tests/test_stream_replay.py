"""A stream resuming from an event memory no longer holds (webui/stream.py): what it replays from the log on the
disk is bounded, so a stream's request never waits for its phone (issue #45's red team: 128 streams from id 0,
never read, held every server thread for 48 s); beyond the bound a `gap` message says what was skipped, a phone a
little behind still gets every event, and a stream that gave way stops replaying."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.access.channel import HAND_OVER, MARK_STREAM
from launcher.daemon import OUTBUF_HIGH_WATERMARK, Daemon
from launcher.events import EventBus, EventType
from tests.conftest import MakeDaemon, joined_client, local_config

MEMORY = 50  # events memory keeps here, so that a short log is mostly on the disk
LOG = 3000  # ~500 KB of frames: far past what one replay reads from the disk


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Daemon:
    monkeypatch.setattr(EventBus, "RECENT", MEMORY)
    running = make_daemon(local_config(tmp_path), virtual=True)
    for n in range(LOG):
        running.bus.publish(EventType.LAUNCHER_MISSED, {"source": "web", "press": n, "cards": 0, "tension": 0.5})
    return running


class Message:
    def __init__(self, raw: bytes) -> None:
        fields = dict(line.split(": ", 1) for line in raw.decode().split("\n") if not line.startswith(":"))
        self.id = int(fields["id"])
        self.event = fields.get("event", "message")
        self.data: dict[str, Any] = json.loads(fields["data"])
        self.size = len(raw) + 2


def _stream(client: FlaskClient, last_event_id: int) -> Iterator[bytes]:
    answer = client.get("/api/events", headers={"Last-Event-ID": str(last_event_id)}, buffered=False)
    assert answer.status_code == 200
    return iter(answer.response)


def _read_to(body: Iterator[bytes], newest: int) -> list[Message]:
    """The messages of the stream up to the one with id `newest` (its comments left out)."""
    text = b""
    messages: list[Message] = []
    while not messages or messages[-1].id < newest:
        text += next(body)
        *whole, text = text.split(b"\n\n")
        messages += [Message(raw) for raw in whole if raw and not raw.startswith(b":")]
    return messages


def test_a_stream_from_the_log_s_start_replays_a_bounded_part_then_says_the_gap_then_follows(daemon: Daemon) -> None:
    newest, in_memory_after = daemon.bus.last_id, daemon.bus.kept_after()
    assert newest - in_memory_after == MEMORY
    messages = _read_to(_stream(daemon.app.test_client(), 0), newest)
    gaps = [m for m in messages if m.event == "gap"]
    assert len(gaps) == 1, [m.id for m in gaps]
    gap = gaps[0]
    before = messages[: messages.index(gap)]
    after = messages[messages.index(gap) + 1 :]
    assert [m.id for m in before] == list(range(1, len(before) + 1)), "the log's start, in order, none missed"
    assert sum(m.size for m in before) <= 64 * 1024 < OUTBUF_HIGH_WATERMARK, "the thread never waits for the phone"
    assert len(before) < LOG // 2
    assert gap.id == in_memory_after and gap.data == {"after": before[-1].id, "to": in_memory_after}
    assert [m.id for m in after] == list(range(in_memory_after + 1, newest + 1)), "all memory holds, once each"
    offsets = {m.id - m.data["data"]["press"] for m in before + after if m.data["type"] == "launcher.missed"}
    assert len(offsets) == 1, "each event is the one of its id"


def test_a_reconnect_after_the_gap_resumes_after_it_with_nothing_skipped(daemon: Daemon) -> None:
    """The browser reconnects with the gap's id (its Last-Event-ID): every event after it, no second gap."""
    newest, in_memory_after = daemon.bus.last_id, daemon.bus.kept_after()
    messages = _read_to(_stream(daemon.app.test_client(), in_memory_after), newest)
    assert [(m.event, m.id) for m in messages] == [("message", n) for n in range(in_memory_after + 1, newest + 1)]


def test_a_phone_a_little_behind_memory_gets_every_event_it_missed_from_the_disk(daemon: Daemon) -> None:
    newest, in_memory_after = daemon.bus.last_id, daemon.bus.kept_after()
    away_from = in_memory_after - 200  # some 35 KB on the disk
    messages = _read_to(_stream(daemon.app.test_client(), away_from), newest)
    assert [(m.event, m.id) for m in messages] == [("message", n) for n in range(away_from + 1, newest + 1)]


def test_a_stream_that_gives_way_during_its_replay_replays_no_more(daemon: Daemon) -> None:
    """A session's fifth stream makes its oldest give way (StreamGate): the oldest, still replaying from the disk,
    ends at its next page, and sends nothing after it."""
    phone = joined_client(daemon)
    oldest = _stream(phone, 0)
    assert next(oldest) == b": connected\n\n"
    first_page = next(oldest)
    assert first_page.startswith(b"id: 1\n")
    others = [_stream(phone, daemon.bus.last_id) for _ in range(4)]
    assert list(oldest) == []
    assert all(next(other) == b": connected\n\n" for other in others)


def test_a_replay_running_on_into_memory_leaves_memory_s_events_to_the_writer(
    make_daemon: MakeDaemon, tmp_path: Path
) -> None:
    """Memory holds 512 KB of a long game's large events: a phone 10 events behind it is sent at most 64 KiB from its
    request (what memory holds comes afterwards, from the writer), and still every event, once, in order."""
    daemon = make_daemon(local_config(tmp_path), virtual=True)
    for n in range(400):
        daemon.bus.publish(EventType.ROUND_SCORED, {"n": n, "scoreboard": "x" * 2000})
    newest, away_from = daemon.bus.last_id, daemon.bus.kept_after() - 10
    body = _stream(daemon.app.test_client(), away_from)
    assert next(body) == b": connected\n\n"
    from_the_request = next(body)
    assert len(from_the_request) <= 64 * 1024
    messages = _read_to(chain([from_the_request], body), newest)
    assert [(m.event, m.id) for m in messages] == [("message", n) for n in range(away_from + 1, newest + 1)]


class _ClosedPipe:
    """A connection handed over whose phone has gone: the writer ends it at once."""

    chunked = False
    total_outbufs_len = 0

    def stream_open(self) -> bool:
        return False

    def write_stream(self, data: bytes) -> bool:
        return False

    def end_stream(self) -> None:
        pass


def test_a_stream_s_request_leaves_its_party_s_share_of_the_threads_only_once_its_replay_is_sent(
    daemon: Daemon,
) -> None:
    """Marked a stream (launcher/access/turns.py: no longer counted in its party's quarter of the threads) only when its
    connection is handed to the writer, not while its own thread still sends the replay."""
    told: list[object] = []
    answer = daemon.app.test_client().get(
        "/api/events",
        headers={"Last-Event-ID": "0"},
        buffered=False,
        environ_overrides={
            MARK_STREAM: lambda: told.append("marked a stream"),
            HAND_OVER: lambda: told.append("handed over") or _ClosedPipe(),
        },
    )
    for chunk in answer.response:
        told.append(len(chunk))
    assert told[-2:] == ["marked a stream", "handed over"], told
    assert len(told) > 3 and all(isinstance(size, int) for size in told[:-2]), "the comment, the replay, the gap"
