"""The event streams' places: a joined phone always gets one, taken from whoever holds the most."""

from __future__ import annotations

from webui.stream_gate import StreamGate, StreamTicket


def _held(tickets: list[StreamTicket | None]) -> list[StreamTicket]:
    assert None not in tickets
    return [t for t in tickets if t is not None and not t.given_way.is_set()]


def test_seven_sessions_of_four_streams_leave_a_place_for_the_next_phone() -> None:
    gate = StreamGate(most=24)
    held = [gate.admit(f"10.0.0.{n}", f"session-{n}") for n in range(7) for _ in range(StreamGate.PER_SESSION)]
    assert gate.count == gate.most == 24 and held.count(None) == 0  # the last ones took the first ones' places
    assert len(_held(held)) == gate.most
    phone = gate.admit("10.0.0.99", "a real phone")
    assert phone is not None and gate.count == gate.most
    assert gate.admit("10.0.0.99", "a real phone") is not None  # its second tab too


def test_a_sessions_fifth_stream_takes_its_own_oldest_place() -> None:
    gate = StreamGate(most=24)
    first, *others = [gate.admit("10.0.0.1", "tabs") for _ in range(StreamGate.PER_SESSION)]
    assert first is not None and not first.given_way.is_set()
    fifth = gate.admit("10.0.0.1", "tabs")
    assert fifth is not None and first.given_way.is_set() and gate.count == StreamGate.PER_SESSION
    assert not any(t is None or t.given_way.is_set() for t in others)
    gate.leave(first)  # its stream ends afterwards: the place is not freed twice
    assert gate.count == StreamGate.PER_SESSION


def test_strangers_give_way_before_joined_phones() -> None:
    gate = StreamGate(most=4)
    stranger = gate.admit("192.168.1.66", None)
    joined = [gate.admit(f"192.168.1.{n}", f"s{n}") for n in range(3)]
    assert None not in joined and stranger is not None
    assert gate.admit("192.168.1.3", "s3") is not None and stranger.given_way.is_set()
    assert gate.admit("192.168.1.67", None) is None  # every place is a joined phone's


def test_a_guests_27_sessions_from_3_addresses_cannot_keep_out_a_new_phone() -> None:
    """Issue #45, 5: 27 sessions from 3 addresses, a stream each, fill the 24 places; every new phone that joins
    gets its stream at once, each time from the address holding the most, and none of the phones' is taken."""
    gate = StreamGate(most=24)
    guest = [gate.admit(f"10.0.0.{1 + n % 3}", f"guest-{n}") for n in range(27)]
    assert gate.count == gate.most and len(_held(guest)) == gate.most
    phones = [gate.admit(f"10.0.1.{n}", f"phone-{n}") for n in range(8)]
    assert None not in phones and not any(p.given_way.is_set() for p in phones if p is not None)
    left = _held(guest)
    assert len(left) == gate.most - 8
    assert sorted(sum(t.party == f"10.0.0.{a}" for t in left) for a in (1, 2, 3)) == [5, 5, 6]  # evenly taken


def test_behind_one_nat_the_session_holding_the_most_gives_way() -> None:
    gate = StreamGate(most=4)
    family = gate.admit("10.0.0.1", "mum")
    guest = [gate.admit("10.0.0.1", "guest") for _ in range(3)]
    newcomer = gate.admit("10.0.0.1", "dad")
    assert newcomer is not None and family is not None and not family.given_way.is_set()
    assert guest[0] is not None and guest[0].given_way.is_set()
