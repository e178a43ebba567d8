"""The event streams' places: a joined phone always gets one, and the phone hogging them gives way first."""

from __future__ import annotations

from webui.stream import StreamGate


def test_seven_sessions_of_four_streams_leave_a_place_for_the_next_phone() -> None:
    gate = StreamGate(threads=32)  # the default: 24 places for streams
    held = [gate.admit(True, f"session-{n}") for n in range(7) for _ in range(StreamGate.PER_SESSION)]
    assert gate.count == gate.most == 24 and held.count(None) == 0  # the last ones took the first ones' places
    given_way = [t for t in held if t is not None and t.given_way.is_set()]
    assert len(given_way) == 7 * StreamGate.PER_SESSION - gate.most
    phone = gate.admit(True, "a real phone")
    assert phone is not None and gate.count == gate.most
    assert gate.admit(True, "a real phone") is not None  # its second tab too


def test_a_sessions_fifth_stream_takes_its_own_oldest_place() -> None:
    gate = StreamGate(threads=32)
    first, *others = [gate.admit(True, "tabs") for _ in range(StreamGate.PER_SESSION)]
    assert first is not None and not first.given_way.is_set()
    fifth = gate.admit(True, "tabs")
    assert fifth is not None and first.given_way.is_set() and gate.count == StreamGate.PER_SESSION
    assert not any(t is None or t.given_way.is_set() for t in others)
    gate.leave(first)  # its stream ends afterwards: the place is not freed twice
    assert gate.count == StreamGate.PER_SESSION


def test_strangers_give_way_before_joined_phones_and_one_each_is_kept() -> None:
    gate = StreamGate(threads=8)  # 4 places
    stranger = gate.admit(False, "192.168.1.66")
    joined = [gate.admit(True, f"s{n}") for n in range(3)]
    assert None not in joined and stranger is not None
    assert gate.admit(True, "s3") is not None and stranger.given_way.is_set()
    assert gate.admit(True, "s4") is None  # four sessions with one stream each: none gives way
    assert gate.admit(False, "192.168.1.67") is None
