"""Two tables that only believe each other (issue #46): what a table's book takes from the broker, as the messages
come, without a broker. A forger on the broker knows the topics and sees every message, but not the key."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from pathlib import Path

import pytest

from launcher.access.budgets import OverBudget
from launcher.events import EventBus
from launcher.game.rotation import Rotation, TournamentError
from launcher.home.tournament import TournamentBook
from launcher.home.tournament_post import ROUNDS_PER_MINUTE, Signed, TournamentPost
from launcher.home.tournament_wire import join_code, key_of, new_key, seal, tournament_id
from launcher.refusals import Refusal
from launcher.store import STORE_FILE, Store
from launcher.store.database import APPLICATION_ID
from launcher.store.migrations import MIGRATIONS
from tests.virtual_clock import VirtualClock

EIGHT = ["Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hu"]
TABLES = ["kitchen", "garden"]


class Table:
    """One table's book and its side on the broker, on a store of its own."""

    def __init__(self, directory: Path, name: str, clock: VirtualClock) -> None:
        directory.mkdir()
        self.store = Store(directory / "launcher.sqlite3")
        self.bus = EventBus(self.store)
        self.book = TournamentBook(self.store, self.bus, table=name, wall=lambda: 1_765_000_000.0)
        self.store_full = False
        self.post = TournamentPost(self.book, check_store=self._check_store, clock=clock)
        self.sent = 0  # the last event of ours put on the "broker"

    def _check_store(self) -> None:
        if self.store_full:
            raise OverBudget(Refusal.STORE_FULL, "the store is full")

    def outbox(self) -> list[Signed]:
        """What this table's outbox sends for the events since the last call."""
        events = self.bus.events_after(self.sent)
        if events:
            self.sent = events[-1].id
        return [signed for event in events for signed in self.post.outgoing(event)]

    def take(self, messages: list[Signed]) -> list[Signed]:
        """Every message taken as the bridge takes it (a refusal is a log line there): the answers sent."""
        answers: list[Signed] = []
        for topic, payload in messages:
            with suppress(TournamentError):
                answers += self.post.receive(topic.split("/")[2:], payload.encode())
        return answers

    def wiped(self, levels: list[str]) -> list[Signed]:
        """A retained message cleared, as the bridge takes it (a refusal is a log line there): what is put back."""
        with suppress(TournamentError):
            return self.post.wiped(levels)
        return []

    def view(self) -> dict[str, object]:
        return self.book.view()


@pytest.fixture
def tables(tmp_path: Path, clock: VirtualClock) -> Iterator[tuple[Table, Table]]:
    yield from two_tables(tmp_path, clock)


def two_tables(tmp_path: Path, clock: VirtualClock) -> Iterator[tuple[Table, Table]]:
    """The kitchen's and the garden's tables on one clock, their buses closed after."""
    with ExitStack() as stack:
        kitchen, garden = Table(tmp_path / "kitchen", "kitchen", clock), Table(tmp_path / "garden", "garden", clock)
        stack.callback(kitchen.bus.close)
        stack.callback(garden.bus.close)
        yield kitchen, garden


def set_up_and_join(kitchen: Table, garden: Table) -> str:
    """The kitchen sets up; the garden's admin types its code; the kitchen's setup reaches the garden."""
    id: str = kitchen.book.set_up(EIGHT, TABLES)["tournament"]["id"]
    code = kitchen.book.code()
    assert code is not None
    garden.book.join(code)
    garden.take(kitchen.outbox())
    return id


def seats(table: str, number: int) -> list[str]:
    return list(Rotation.of(EIGHT, TABLES).seats_at(table, number).seats)


def points(table: str, number: int, value: int = 10) -> dict[str, int]:
    return dict.fromkeys(seats(table, number), value)


def rounds(table: Table) -> list[tuple[str, int, dict[str, int]]]:
    view = table.view()["tournament"]
    assert isinstance(view, dict)
    return [(r["table"], r["number"], r["points"]) for r in view["rounds"]]


# --- the key and its code --------------------------------------------------------------------------------------


def test_a_join_code_is_28_letters_in_groups_typed_any_way_and_a_typo_is_refused() -> None:
    key = bytes(range(16))  # fixed: one check byte lets 1 typo in 256 through, and this one is among the 255
    code = join_code(key)
    assert len(code.replace("-", "")) == 28 and all(len(group) == 4 for group in code.split("-"))
    assert key_of(code) == key
    assert key_of(" " + code.lower().replace("-", " ") + " ") == key
    assert key_of(code.replace("O", "0").replace("I", "1").replace("B", "8")) == key
    typo = code[:5] + ("A" if code[5] != "A" else "B") + code[6:]
    with pytest.raises(TournamentError) as refused:
        key_of(typo)
    assert refused.value.code == "bad_code"
    with pytest.raises(TournamentError):
        key_of("")


def test_the_tournament_id_comes_from_the_key_and_names_no_other() -> None:
    a, b = new_key(), new_key()
    assert tournament_id(a) == tournament_id(a) != tournament_id(b)


# --- two tables converge, and believe nobody else --------------------------------------------------------------


def test_a_joined_table_waits_for_the_setup_then_both_score_and_agree(tables: tuple[Table, Table]) -> None:
    kitchen, garden = tables
    id = kitchen.book.set_up(EIGHT, TABLES)["tournament"]["id"]
    code = kitchen.book.code()
    assert code is not None
    garden.book.join(code)
    assert garden.view() == {"table": "garden", "tournament": None, "awaiting": id}
    garden.take(kitchen.outbox())
    kitchen.book.score(1, points("kitchen", 1, 20))
    garden.book.score(1, points("garden", 1, 30))
    garden.take(kitchen.outbox())
    kitchen.take(garden.outbox())
    assert rounds(kitchen) == rounds(garden) and len(rounds(kitchen)) == 2
    assert kitchen.view()["tournament"] == {**garden.view()["tournament"], "this_table": "kitchen"}  # type: ignore[dict-item]


def test_a_forged_round_from_a_client_without_the_key_changes_nothing_and_never_splits_the_tables(
    tables: tuple[Table, Table],
) -> None:
    kitchen, garden = tables
    id = set_up_and_join(kitchen, garden)
    made_up = {"number": 1, "version": 1, "points": points("garden", 1, 999)}
    forged = [
        # unsigned, as the forger sent it
        (f"uno-launcher/tournament/{id}/round/garden/1", json.dumps({**made_up, "table": "garden"})),
        # signed with a key of the forger's own
        (f"uno-launcher/tournament/{id}/round/garden/1", seal(new_key(), f".../{id}", "garden", made_up)),
        # the MAC of another topic
        (f"uno-launcher/tournament/{id}/round/garden/1", garden_signed_elsewhere(garden, id)),
    ]
    for table in (kitchen, garden):
        before = table.bus.last_id
        assert table.take(forged) == []
        assert table.bus.last_id == before and rounds(table) == []
    garden.book.score(1, points("garden", 1, 201))  # the real round 1 is still the garden's to score
    kitchen.take(garden.outbox())
    assert rounds(kitchen) == rounds(garden) == [("garden", 1, points("garden", 1, 201))]


def garden_signed_elsewhere(garden: Table, id: str) -> str:
    """A payload the garden really signed, for its round 1 of another tournament's topic: moved to this one."""
    key = garden.book.key(id)
    assert key is not None
    body = {"number": 1, "version": 1, "points": points("garden", 1, 5)}
    return seal(key, "uno-launcher/tournament/ffffffffffff/round/garden/1", "garden", body)


def test_a_forged_setup_never_becomes_the_current_tournament_whatever_its_timestamp(
    tables: tuple[Table, Table],
) -> None:
    kitchen, garden = tables
    id = set_up_and_join(kitchen, garden)
    key = new_key()
    fake = tournament_id(key)
    body = {"players": EIGHT, "tables": TABLES, "created_ts": 9.9e10}
    for table in (kitchen, garden):
        table.take(
            [
                (
                    f"uno-launcher/tournament/{fake}/setup",
                    seal(key, f"uno-launcher/tournament/{fake}/setup", "x", body),
                ),
                (f"uno-launcher/tournament/{id}/setup", json.dumps(body)),
            ]
        )
        assert table.view()["tournament"]["id"] == id  # type: ignore[index]
        assert [t["id"] for t in table.book.export()] == [id]
    # And a new tournament set up here is the one this table plays, answered and kept as such.
    again = kitchen.book.set_up(EIGHT, TABLES)["tournament"]["id"]
    assert again != id and kitchen.view()["tournament"]["id"] == again  # type: ignore[index]


def test_a_correction_and_a_take_back_reach_every_table_and_a_replay_of_the_old_round_changes_nothing(
    tables: tuple[Table, Table],
) -> None:
    kitchen, garden = tables
    set_up_and_join(kitchen, garden)
    kitchen.book.score(1, points("kitchen", 1, 20))
    first = kitchen.outbox()
    garden.take(first)
    kitchen.book.correct(1, points("kitchen", 1, 25))
    garden.take(kitchen.outbox())
    assert rounds(garden) == rounds(kitchen) == [("kitchen", 1, points("kitchen", 1, 25))]
    assert garden.view()["tournament"]["rounds"][0]["version"] == 2  # type: ignore[index]
    garden.take(first)  # the broker's attacker replays the signed version 1
    assert rounds(garden) == [("kitchen", 1, points("kitchen", 1, 25))]
    kitchen.book.correct(1, None)  # taken back: to be played again
    garden.take(kitchen.outbox())
    assert rounds(garden) == rounds(kitchen) == []
    assert kitchen.view()["tournament"]["tables"][0]["next_round"] == 1  # type: ignore[index]
    kitchen.book.score(1, points("kitchen", 1, 7))
    garden.take(first + kitchen.outbox())
    assert rounds(garden) == rounds(kitchen) == [("kitchen", 1, points("kitchen", 1, 7))]


def test_only_the_table_that_scored_a_round_may_correct_it(tables: tuple[Table, Table]) -> None:
    kitchen, garden = tables
    id = set_up_and_join(kitchen, garden)
    garden.book.score(1, points("garden", 1, 5))
    kitchen.take(garden.outbox())
    with pytest.raises(TournamentError) as refused:
        kitchen.book.correct(2, points("kitchen", 2))
    assert refused.value.code == "no_round"
    # The garden's round 1 signed by the kitchen (a key holder, but not the garden): refused at both tables.
    key = kitchen.book.key(id)
    assert key is not None
    at = f"uno-launcher/tournament/{id}/round/garden/1"
    body = {"number": 1, "version": 9, "points": points("garden", 1, 0)}
    for table in (kitchen, garden):
        table.take([(at, seal(key, at, "kitchen", body))])
        assert rounds(table) == [("garden", 1, points("garden", 1, 5))]
    # An older version of the garden's own round (a replay, or paho sending it again): the garden keeps its own.
    garden.book.correct(1, points("garden", 1, 6))
    kitchen.take(garden.outbox())
    old = {"number": 1, "version": 1, "points": points("garden", 1, 5)}
    for table in (kitchen, garden):
        table.take([(at, seal(key, at, "garden", old))])
        assert rounds(table) == [("garden", 1, points("garden", 1, 6))]


def test_a_table_restored_from_an_older_backup_takes_its_own_newer_rounds_back(
    tables: tuple[Table, Table], tmp_path: Path, clock: VirtualClock
) -> None:
    kitchen, garden = tables
    set_up_and_join(kitchen, garden)
    kitchen.book.score(1, points("kitchen", 1, 1))
    garden.take(kitchen.outbox())
    backup = tmp_path / "backup.sqlite3"
    with kitchen.store.connect() as conn:
        conn.execute(f"VACUUM INTO '{backup}'")
    kitchen.book.correct(1, points("kitchen", 1, 2))
    retained = kitchen.outbox()  # what the broker keeps
    garden.take(retained)
    store = Store(backup)  # the kitchen, restored from the backup made before its correction
    bus = EventBus(store)
    try:
        book = TournamentBook(store, bus, table="kitchen")
        post = TournamentPost(book, check_store=lambda: None, clock=clock)
        assert [r["version"] for r in book.view()["tournament"]["rounds"]] == [1]  # type: ignore[index]
        for topic, payload in retained:  # at its connection, the broker's retained messages
            post.receive(topic.split("/")[2:], payload.encode())
        assert [r["points"] for r in book.view()["tournament"]["rounds"]] == [points("kitchen", 1, 2)]  # type: ignore[index]
        assert book.view()["tournament"]["rounds"] == garden.view()["tournament"]["rounds"]  # type: ignore[index]
    finally:
        bus.close()


def test_rounds_heard_before_their_setup_are_taken_when_it_comes(tables: tuple[Table, Table]) -> None:
    kitchen, garden = tables
    kitchen.book.set_up(EIGHT, TABLES)
    setup = kitchen.outbox()
    kitchen.book.score(1, points("kitchen", 1, 3))
    kitchen.book.score(2, points("kitchen", 2, 4))
    code = kitchen.book.code()
    assert code is not None
    garden.book.join(code)
    garden.take(kitchen.outbox() + setup)  # a broker's retained messages, rounds first
    assert [n for _, n, _ in rounds(garden)] == [1, 2]


def test_an_ask_is_answered_with_everything_the_table_scored_once_per_nonce(tables: tuple[Table, Table]) -> None:
    kitchen, garden = tables
    id = set_up_and_join(kitchen, garden)
    for number in (1, 2, 3):
        kitchen.book.score(number, points("kitchen", number))
    kitchen.outbox()  # sent, and lost with the broker's persistence
    asks = garden.post.asks()
    answers = kitchen.take(asks)
    assert [topic.rsplit("/", 1)[-1] for topic, _ in answers] == ["setup", "1", "2", "3"]
    garden.take(answers)
    assert rounds(garden) == rounds(kitchen)
    assert kitchen.take(asks) == []  # the same ask again (a replay): not answered again
    assert {topic for topic, _ in asks} == {f"uno-launcher/tournament/{id}/ask/garden"}


def test_rounds_and_setups_from_the_broker_have_a_budget_and_the_store_a_size(
    tables: tuple[Table, Table], clock: VirtualClock
) -> None:
    kitchen, garden = tables
    id = set_up_and_join(kitchen, garden)
    key = kitchen.book.key(id)
    assert key is not None

    def version(n: int) -> Signed:
        at = f"uno-launcher/tournament/{id}/round/kitchen/1"
        return at, seal(key, at, "kitchen", {"number": 1, "version": n, "points": points("kitchen", 1, n)})

    garden.take([version(n) for n in range(1, ROUNDS_PER_MINUTE + 20)])
    kept = garden.view()["tournament"]["rounds"][0]["version"]  # type: ignore[index]
    assert kept == ROUNDS_PER_MINUTE  # a minute's worth taken, the flood beyond refused
    clock.advance(60)
    garden.take([version(ROUNDS_PER_MINUTE + 100)])
    assert garden.view()["tournament"]["rounds"][0]["version"] == ROUNDS_PER_MINUTE + 100  # type: ignore[index]
    garden.store_full = True
    garden.take([version(ROUNDS_PER_MINUTE + 200)])
    assert garden.view()["tournament"]["rounds"][0]["version"] == ROUNDS_PER_MINUTE + 100  # type: ignore[index]


def test_the_choice_the_keys_and_the_versions_are_kept_over_a_restart(tmp_path: Path, clock: VirtualClock) -> None:
    kitchen, garden = Table(tmp_path / "k", "kitchen", clock), Table(tmp_path / "g", "garden", clock)
    try:
        id = set_up_and_join(kitchen, garden)
        kitchen.book.score(1, points("kitchen", 1, 20))
        kitchen.book.correct(1, points("kitchen", 1, 21))
        garden.take(kitchen.outbox())
    finally:
        kitchen.bus.close()
        garden.bus.close()
    for directory, name in ((tmp_path / "k", "kitchen"), (tmp_path / "g", "garden")):
        store = Store(directory / "launcher.sqlite3")
        bus = EventBus(store)
        try:
            book = TournamentBook(store, bus, table=name)
            view = book.view()["tournament"]
            assert view["id"] == id and book.key(id) is not None
            assert [(r["number"], r["version"]) for r in view["rounds"]] == [(1, 2)]
        finally:
            bus.close()


def test_an_upgraded_store_keeps_playing_its_newest_tournament_as_its_choice(tmp_path: Path) -> None:
    """A store from before the keys: its tournaments stay, the newest is the one chosen, and it has no code (it was
    never shared with a key; a new one is)."""
    path = tmp_path / STORE_FILE
    before = next(i for i, sql in enumerate(MIGRATIONS) if "CREATE TABLE tournament_keys" in sql)
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        for migration in MIGRATIONS[:before]:
            conn.executescript(migration)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {before}")
        for id, created in (("0123456789ab", 1000.0), ("ba9876543210", 2000.0)):
            setup = json.dumps({"players": EIGHT[:4], "tables": ["kitchen"], "created_ts": created})
            conn.execute("INSERT INTO tournaments VALUES (?, ?, ?)", (id, setup, created))
        result = {"tournament": "ba9876543210", "table": "kitchen", "number": 1, "points": dict.fromkeys(EIGHT[:4], 3)}
        conn.execute("INSERT INTO tournament_rounds VALUES ('ba9876543210', 'kitchen.1', ?)", (json.dumps(result),))
    store = Store(path)
    bus = EventBus(store)
    try:
        book = TournamentBook(store, bus, table="kitchen")
        view = book.view()["tournament"]
        assert view["id"] == "ba9876543210" and [(r["number"], r["version"]) for r in view["rounds"]] == [(1, 1)]
        assert book.code() is None
        book.score(2, dict.fromkeys(Rotation.of(EIGHT[:4], ["kitchen"]).seats_at("kitchen", 2).seats, 1))
    finally:
        bus.close()
