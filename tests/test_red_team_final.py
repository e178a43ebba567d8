"""Red team on this stop's trust-boundary changes: a stranger on the Wi-Fi, a guest holding the table PIN and a
client on the MQTT broker (without the tournament's key) attack the PIN guard, the tournament post and the page.

An attack that holds is a passing test; one that gets through is `xfail(strict=True, reason="DOOR: ...")` with
what it got, in figures."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
from flask.testing import FlaskClient
from paho.mqtt.enums import CallbackAPIVersion

from launcher.access.pin_guard import PinGuard, TooManyTries
from launcher.daemon import Daemon
from launcher.events import EventType
from launcher.game.rotation import TournamentError
from launcher.home.mqtt_outbox import MqttOutbox
from launcher.home.topics import Message
from launcher.home.tournament_post import MAX_MESSAGE_BYTES, Signed, topic
from launcher.home.tournament_wire import seal
from tests.conftest import joined_client, local_config, local_daemon, start_daemon, wait_until
from tests.mosquitto import Broker
from tests.test_mqtt import mqtt_toml, table_dir
from tests.test_tournament_broker import connected, score, set_up
from tests.test_tournament_broker import rounds as daemon_rounds
from tests.test_tournament_table_off import Reader, code_of, home_md_block, porch_joins, scores, three
from tests.test_tournament_trust import EIGHT, Table, points, rounds, set_up_and_join, two_tables
from tests.virtual_clock import VirtualClock

__all__ = ["three"]  # the fixture, taken by name

# --- the PIN guard: many addresses, parallel bursts, a restart ----------------------------------------------------


def _stranger(daemon: Daemon, address: str) -> FlaskClient:
    client = daemon.app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return client


def _wrong_pin(daemon: Daemon) -> str:
    pins = daemon.new_pins
    assert pins is not None
    return next(p for p in ("000000", "111111", "222222") if p not in (pins.table, pins.admin))


def _guesses_taken(daemon: Daemon, addresses: list[str], pin: str) -> tuple[int, int]:
    """Each address guesses once, all at once from threads: (wrong PINs checked, guesses not checked)."""
    answers: list[int] = []
    lock = threading.Lock()

    def guess(address: str) -> None:
        status = _stranger(daemon, address).post("/api/session", json={"pin": pin}).status_code
        with lock:
            answers.append(status)

    threads = [threading.Thread(target=guess, args=(a,)) for a in addresses]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(answers) <= {401, 202, 429}, answers  # 202: over budget, the PIN waits for a person at the table
    return answers.count(401), len(answers) - answers.count(401)


ADDRESSES = [f"127.0.0.{n}" for n in range(2, 252)]  # 250 addresses, a home /24


def test_250_addresses_guessing_in_one_parallel_burst_check_at_most_the_networks_budget(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        checked, refused = _guesses_taken(daemon, ADDRESSES, _wrong_pin(daemon))
        assert checked == PinGuard.BUDGET and refused == len(ADDRESSES) - PinGuard.BUDGET
        # a second burst from the same addresses at once gets nothing: the budget refills 240 an hour
        assert _guesses_taken(daemon, ADDRESSES, _wrong_pin(daemon)) == (0, len(ADDRESSES))


def test_one_address_bursting_50_guesses_in_parallel_gets_its_five_free_tries_and_no_more() -> None:
    clock = VirtualClock()
    try:
        guard = PinGuard(clock=clock.now)
        taken: list[int] = []

        def burst() -> None:
            with suppress(TooManyTries):
                taken.append(guard.take("127.0.0.9"))

        threads = [threading.Thread(target=burst) for _ in range(50)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(taken) == PinGuard.FREE_TRIES  # the fifth try starts the wait
        assert guard.wait_after("127.0.0.9") == PinGuard.FIRST_WAIT_S
    finally:
        clock.close()


@pytest.mark.xfail(
    strict=True,
    reason="DOOR: the PIN guard lives only in memory: after a daemon restart (power cut, crash, an admin's "
    "restart) the same 250 addresses check another 100 PINs at once, and a client made to wait 15 min "
    "guesses again at once; measured 100 + 100 guesses over one restart instead of 100 + ~0",
)
def test_a_restart_gives_the_guessers_no_fresh_budget(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        pin = _wrong_pin(daemon)
        first, _ = _guesses_taken(daemon, ADDRESSES, pin)
    clock = VirtualClock()
    again = Daemon(local_config(tmp_path), clock=clock)
    try:
        second, _ = _guesses_taken(again, ADDRESSES, pin)
    finally:
        again.close()
        clock.close()
    assert (first, second) == (PinGuard.BUDGET, 0)


@pytest.mark.parametrize("host", ["evil.example", "localhost.evil.example", "127.0.0.1.nip.io", "LOCALHOST.:80x"])
def test_a_rebound_name_is_refused_before_any_pin_is_checked(tmp_path: Path, host: str) -> None:
    with local_daemon(tmp_path) as daemon:
        stranger = daemon.app.test_client()
        reply = stranger.post("/api/session", json={"pin": _wrong_pin(daemon)}, headers={"Host": host})
        assert reply.status_code in (400, 421), reply.get_json()
        # nothing spent: all 100 tries are still there for the family
        assert _guesses_taken(daemon, ADDRESSES[:100], _wrong_pin(daemon)) == (100, 0)


# --- the page: who may say "refilled" or reset, and how often -------------------------------------------------


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    with local_daemon(tmp_path) as running:
        yield running


def test_a_stranger_may_neither_say_refilled_nor_reset(daemon: Daemon) -> None:
    stranger = daemon.app.test_client()
    assert stranger.post("/api/hopper", json={"cards": 108}).status_code == 401
    assert stranger.post("/api/reset", json={}).status_code == 403
    assert daemon.controller.snapshot()["hopper"]["loaded"] != 108


def test_a_guest_may_not_reset_the_launcher(daemon: Daemon) -> None:
    guest = joined_client(daemon)
    reply = guest.post("/api/reset", json={})
    assert reply.status_code == 403 and reply.get_json()["error"]["code"] == "admin_required"


def test_a_guest_tapping_refilled_from_the_top_is_budgeted_to_config_mds_six_a_minute(tmp_path: Path) -> None:
    with local_daemon(tmp_path, limits={}) as daemon:  # the shipped [limits]
        guest = joined_client(daemon)
        statuses = [guest.post("/api/hopper", json={"cards": 108}).status_code for _ in range(200)]
        assert statuses.count(200) == 6 and set(statuses) == {200, 429}, (statuses.count(200), set(statuses))


def test_a_guest_joining_again_for_a_fresh_session_gets_no_fresh_refill_budget(tmp_path: Path) -> None:
    """The reloads budget is per session: a guest holding the table PIN simply joins again when refused."""
    with local_daemon(tmp_path, limits={}) as daemon:
        guest = joined_client(daemon)
        pins = daemon.new_pins
        assert pins is not None
        taken = 0
        for _ in range(200):
            status = guest.post("/api/hopper", json={"cards": 108}).status_code
            taken += status == 200
            if status == 429:
                guest.post("/api/session", json={"pin": pins.table})
        assert taken <= 12, f"{taken} refills told in one minute by one guest"


def test_a_stranger_reads_no_session_secrets_in_the_state(daemon: Daemon) -> None:
    stranger = daemon.app.test_client()
    reply = stranger.get("/api/state")
    assert reply.status_code == 200
    text = reply.get_data(as_text=True)
    pins = daemon.new_pins
    assert pins is not None
    for secret in (pins.table, pins.admin):
        assert secret is None or secret not in text
    assert "password" not in text.lower() and "key" not in (json.loads(text).get("mqtt") or {})


# --- the tournament post: what each message from the broker costs the tables ---------------------------------


@pytest.fixture
def tables(tmp_path: Path, clock: VirtualClock) -> Iterator[tuple[Table, Table]]:
    yield from two_tables(tmp_path, clock)


def _corrected(kitchen: Table, garden: Table) -> tuple[str, Signed]:
    """The kitchen's round 1 scored then corrected, both tables holding version 2; the signed version 1 a client
    on the broker saw go by."""
    id = set_up_and_join(kitchen, garden)
    kitchen.book.score(1, points("kitchen", 1, 20))
    (first,) = [m for m in kitchen.outbox() if "/round/" in m[0]]
    garden.take([first])
    kitchen.book.correct(1, points("kitchen", 1, 25))
    garden.take(kitchen.outbox())
    return id, first


REPLAYS = 1000


def test_replaying_an_old_version_costs_the_tables_a_bounded_number_of_publishes(
    tables: tuple[Table, Table],
) -> None:
    """Closed: once a door (1000 replays of a seen old version made 2000 publishes at two tables); now each table
    answers an older version of one round at most ANSWERS_PER_MINUTE a minute (launcher/home/tournament_post.py)."""
    kitchen, garden = tables
    _, first = _corrected(kitchen, garden)
    answers = kitchen.take([first] * REPLAYS) + garden.take([first] * REPLAYS)
    assert len(answers) <= 2 * 10, f"{len(answers)} publishes for {REPLAYS} replays"


def test_wiping_the_setup_again_and_again_costs_the_tables_a_bounded_number_of_publishes(
    tables: tuple[Table, Table],
) -> None:
    """Closed: once a door (1000 clears of the setup made 2000 publishes at two tables); now a cleared topic is put
    back at most ANSWERS_PER_MINUTE a minute, a clear beyond that refused as the bridge refuses (a log line)."""
    kitchen, garden = tables
    id = set_up_and_join(kitchen, garden)
    answers = [m for _ in range(REPLAYS) for table in tables for m in table.wiped([id, "setup"])]
    assert len(answers) <= 2 * 10, f"{len(answers)} publishes for {REPLAYS} wipes"


def test_wiping_another_tables_round_makes_no_table_speak_for_it(tables: tuple[Table, Table]) -> None:
    kitchen, garden = tables
    id = set_up_and_join(kitchen, garden)
    kitchen.book.score(1, points("kitchen", 1))
    garden.take(kitchen.outbox())
    assert garden.post.wiped([id, "round", "kitchen", "1"]) == []
    assert len(kitchen.post.wiped([id, "round", "kitchen", "1"])) == 1  # its own: one publish per wipe


def test_a_replayed_ask_is_answered_once_and_spends_no_budget(tables: tuple[Table, Table]) -> None:
    kitchen, garden = tables
    set_up_and_join(kitchen, garden)
    kitchen.book.score(1, points("kitchen", 1))
    garden.take(kitchen.outbox())
    (ask,) = garden.post.asks()
    first = kitchen.take([ask])
    assert first and kitchen.take([ask] * REPLAYS) == []
    assert kitchen.take(garden.post.asks())  # the garden's next real ask is still answered


def test_a_round_signed_for_one_tournament_is_refused_in_another(
    tmp_path: Path, clock: VirtualClock, tables: tuple[Table, Table]
) -> None:
    kitchen, garden = tables
    old = set_up_and_join(kitchen, garden)
    kitchen.book.score(1, points("kitchen", 1))
    (signed,) = [m for m in kitchen.outbox() if "/round/" in m[0]]
    new = kitchen.book.set_up(["Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hu"], ["kitchen", "garden"])
    new_id = new["tournament"]["id"]
    assert new_id != old
    moved = signed[0].replace(old, new_id)
    with pytest.raises(TournamentError) as refused:
        kitchen.post.receive(moved.split("/")[2:], signed[1].encode())
    assert refused.value.code in ("bad_signature", "unknown_tournament")


def test_a_table_id_that_collides_cannot_sign_for_the_other_table(tables: tuple[Table, Table]) -> None:
    """A forger who names itself 'kitchen' on the garden's topic (or with a trailing space, another case) gets
    nowhere: the sender is signed and must be the table of the topic."""
    kitchen, garden = tables
    id = set_up_and_join(kitchen, garden)
    kitchen.book.score(1, points("kitchen", 1))
    (signed,) = [m for m in kitchen.outbox() if "/round/" in m[0]]
    for table in ("garden", "kitchen ", "Kitchen"):
        at = topic(id, "round", table, "1")
        with pytest.raises(TournamentError):
            garden.post.receive(at.split("/")[2:], signed[1].encode())
    assert [r["table"] for r in garden.view()["tournament"]["rounds"]] == []  # type: ignore[index]


def _nested(depth: int) -> bytes:
    body = '{"from":"kitchen","body":{"number":' + "[" * depth + "]" * depth + '},"mac":"' + "0" * 64 + '"}'
    return body.encode()


@pytest.mark.parametrize("depth", [500, 1990, MAX_MESSAGE_BYTES // 2 - 60])
def test_a_payload_nested_deep_at_the_size_limit_is_refused_cleanly(tables: tuple[Table, Table], depth: int) -> None:
    kitchen, garden = tables
    id = set_up_and_join(kitchen, garden)
    payload = _nested(depth)
    assert len(payload) <= MAX_MESSAGE_BYTES
    with pytest.raises(TournamentError) as refused:
        garden.post.receive([id, "round", "kitchen", "1"], payload)
    assert refused.value.code in ("unsigned", "bad_signature", "bad_json")


def test_one_byte_over_the_size_limit_is_refused_before_parsing(tables: tuple[Table, Table]) -> None:
    kitchen, garden = tables
    id = set_up_and_join(kitchen, garden)
    with pytest.raises(TournamentError) as refused:
        garden.post.receive([id, "setup"], b" " * (MAX_MESSAGE_BYTES + 1))
    assert refused.value.code == "too_large"


def test_reannouncing_at_each_connection_costs_one_message_per_round_held(tables: tuple[Table, Table]) -> None:
    """A flapping link re-announces everything each time: measure what one reconnection costs a table holding
    every round of an evening (each table's rounds 1-10) so the figure is known, and that it grows no faster."""
    kitchen, garden = tables
    id = set_up_and_join(kitchen, garden)
    for n in range(1, 11):
        kitchen.book.score(n, points("kitchen", n))
        garden.book.score(n, points("garden", n))
    garden.take(kitchen.outbox())
    kitchen.take(garden.outbox())
    key = kitchen.book.key(id)
    assert key is not None
    sent = kitchen.post.announcements() + kitchen.post.asks()
    assert len(sent) == 1 + 20 + 1  # the setup, every round held, one ask
    assert all(len(payload) <= MAX_MESSAGE_BYTES for _, payload in sent)
    assert seal(key, sent[0][0], "kitchen", kitchen.book.setup(id) or {}) == sent[0][1]


# --- HOME.md's widened ACL: a client holding one table's credentials (not the key) ---------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="DOOR: with the scoring table off, a client allowed to write round topics (any table's credentials "
    "under HOME.md's ACL) clears its rounds' retained messages; the tables holding them put back only their own "
    "(wiped) and answer asks with their own only, so a table joining gets 1 of the 3 rounds (the kitchen's 2 "
    "are missing) until some table reconnects",
)
def test_wiping_the_rounds_of_a_table_that_is_off_hides_nothing_from_a_table_joining(
    three: tuple[Table, Table, Table],
) -> None:
    kitchen, garden, porch = three
    kitchen.book.score(1, scores("kitchen", 1, 30))
    kitchen.book.score(2, scores("kitchen", 2, 20))
    garden.book.score(1, scores("garden", 1, 15))
    retained = dict(kitchen.outbox())
    garden.take(list(retained.items()))
    retained.update(garden.outbox())
    kitchen.take(list(retained.items()))
    # The kitchen is switched off; the client clears its rounds (empty retained messages); the garden hears each.
    put_back: list[Signed] = []
    for at in [t for t in retained if "/round/kitchen/" in t]:
        del retained[at]
        put_back += garden.post.wiped(at.split("/")[2:])
    retained.update(put_back)
    porch_joins(porch, code_of(kitchen), retained, [garden])
    assert len(rounds(porch)) == len(rounds(garden)) == 3, f"the porch holds {len(rounds(porch))} of 3 rounds"


def _home_md_broker(directory: Path) -> Broker:
    """Mosquitto set up from HOME.md's ACL and settings, with users kitchen, garden and homeassistant (password:
    the user's name then -pw), not started."""
    directory.mkdir()
    broker = Broker(directory)
    passwords, acl = directory / "passwd", directory / "acl"
    for i, user in enumerate(("kitchen", "garden", "homeassistant")):
        create = ["-c"] if i == 0 else []
        subprocess.run(["mosquitto_passwd", *create, "-b", str(passwords), user, f"{user}-pw"], check=True)
    acl.write_text(home_md_block("Let each user write only what is theirs"), encoding="utf-8")
    for path in (passwords, acl):
        path.chmod(0o600)
    settings = home_md_block("And `/etc/mosquitto/conf.d/uno-launcher.conf`").replace(
        "/etc/mosquitto/", f"{directory}/"
    )
    text = broker.config.read_text(encoding="utf-8").replace("allow_anonymous true\n", "")
    broker.config.write_text(text + settings.replace("listener 1883\n", ""), encoding="utf-8")
    return broker


class Counter(Reader):
    """A client of the broker that counts every message it hears, retained or not, by topic."""

    def __init__(self, broker: Broker, user: str, password: str, topic: str) -> None:
        self.heard: list[str] = []
        super().__init__(broker, user, password, topic)

    def _on_message(self, client: Any, userdata: Any, message: paho.MQTTMessage) -> None:
        super()._on_message(client, userdata, message)
        self.heard.append(message.topic)


def _as_garden(broker: Broker, deed: Callable[[paho.Client], None]) -> None:
    """An attacker who read the garden's broker password connects (as the garden: HOME.md names each client
    by its user), does `deed`, and leaves."""
    attacker = paho.Client(CallbackAPIVersion.VERSION2, client_id="not-the-garden", protocol=paho.MQTTv5)
    attacker.username_pw_set("garden", "garden-pw")
    attacker.connect("127.0.0.1", broker.port)
    attacker.loop_start()
    try:
        wait_until(attacker.is_connected)
        deed(attacker)
    finally:
        attacker.disconnect()
        attacker.loop_stop()


KICKS = 5


@pytest.mark.slow
def test_the_gardens_credentials_clear_the_kitchens_rounds_and_each_connection_costs_the_garden_a_reannouncement(
    tmp_path: Path,
) -> None:
    """Held, with figures: HOME.md's ACL lets the garden's user clear the kitchen's retained round while the kitchen
    is off, but a connection under the garden's user takes over the garden's own session (use_username_as_clientid),
    so the garden reconnects and puts every round back; each such connection costs the garden one re-announcement
    (its setup, every round held, its ask)."""
    broker = _home_md_broker(tmp_path / "broker")
    tables = ["kitchen", "garden"]
    with ExitStack() as stack:
        broker.start()
        stack.callback(broker.stop)
        daemons = {}
        for name in tables:
            secret = tmp_path / f"{name}-password"
            secret.write_text(f"{name}-pw\n", encoding="utf-8")
            extra = f'username = "{name}"\npassword_file = "{secret}"'
            daemons[name] = start_daemon(table_dir(tmp_path, name), mqtt_toml(broker, name, extra))
            stack.callback(daemons[name].close)
        kitchen, garden = daemons["kitchen"], daemons["garden"]
        id = set_up(kitchen, [garden], EIGHT, tables)
        score(kitchen, "kitchen", EIGHT, tables, 1)
        wait_until(lambda: len(daemon_rounds(garden)) == 1)
        kitchen.close()
        reader = Counter(broker, "homeassistant", "homeassistant-pw", f"uno-launcher/tournament/{id}/#")
        stack.callback(reader.close)
        kitchens = f"uno-launcher/tournament/{id}/round/kitchen/1"
        wait_until(lambda: reader.retained.get(kitchens))
        start = len(reader.heard)
        for _ in range(KICKS):
            before = len(reader.heard)
            _as_garden(broker, lambda c: c.publish(kitchens, b"", qos=1, retain=True).wait_for_publish(5))
            wait_until(lambda b=before: len(reader.heard) >= b + 4, timeout=40, what="the garden's re-announcement")
            wait_until(lambda: connected(garden), timeout=40)
        wait_until(lambda: reader.retained.get(kitchens), timeout=40, what="the kitchen's round back on the broker")
        per_kick = (len(reader.heard) - start) / KICKS
        # the attacker's clear, then the garden's setup, the kitchen's round (all it holds) and its ask
        assert per_kick <= 4, f"{per_kick} messages per attacker connection: {reader.heard[start:]}"
        assert daemon_rounds(garden)[0][1] == 1


# --- the outbox: acknowledgements it did not ask for ---------------------------------------------------------------

PAHO_MIDS = 65535  # paho's message ids run 1..65535 then come round again


def test_a_press_is_marked_sent_only_once_the_broker_acknowledged_it(tmp_path: Path, clock: VirtualClock) -> None:
    """Closed: once a door (acknowledgements of the connection's own messages, heard while the outbox was idle, let a
    press pass as acknowledged once paho's message ids came round); now the outbox forgets them before each batch."""
    table = Table(tmp_path / "kitchen", "kitchen", clock)
    published: list[Message] = []
    mids = iter(range(1, PAHO_MIDS + 1))  # paho's counter, come round again

    def publish(message: Message) -> int:
        published.append(message)
        return next(mids)

    outbox = MqttOutbox(table="kitchen", bus=table.bus, store=table.store, tournaments=table.post, publish=publish)
    try:
        outbox.start()
        outbox.resume()
        for mid in range(1, PAHO_MIDS + 1):  # the answers the connection sent to the replays, each acknowledged
            outbox.acknowledged(mid)
        pressed = table.bus.publish(EventType.BUTTON_PRESSED, {"press": None, "source": "button"})
        wait_until(lambda: published, what="the press published")
        with pytest.raises(pytest.fail.Exception):  # no acknowledgement of the press came: the mark stays
            wait_until(lambda: outbox.sent >= pressed.id, timeout=3, what="the mark")
    finally:
        outbox.stop()
        table.bus.close()


# --- what a stranger reads ------------------------------------------------------------------------------------------


def test_neither_a_stranger_nor_a_guest_reads_the_tournaments_key_anywhere(daemon: Daemon) -> None:
    admin = joined_client(daemon, admin=True)
    made = admin.post("/api/tournaments", json={"players": EIGHT, "tables": ["table", "garden"]})
    assert made.status_code == 201
    code = admin.get("/api/tournament/code").get_json()["code"]
    assert code
    stranger, guest = daemon.app.test_client(), joined_client(daemon)
    assert stranger.get("/api/tournament/code").status_code in (401, 403)
    assert guest.get("/api/tournament/code").status_code == 403
    for reader in (stranger, guest):
        for path in ("/api/state", "/api/tournament"):
            text = reader.get(path).get_data(as_text=True)
            assert code not in text and code.replace("-", "") not in text, path


@pytest.mark.slow
def test_a_stranger_reading_why_the_broker_refused_the_table_learns_no_password(tmp_path: Path) -> None:
    broker = _home_md_broker(tmp_path / "broker")
    broker.start()
    try:
        secret = tmp_path / "kitchen-password"
        secret.write_text("not-the-kitchens-s3cret\n", encoding="utf-8")
        extra = f'username = "kitchen"\npassword_file = "{secret}"'
        kitchen = start_daemon(table_dir(tmp_path, "kitchen"), mqtt_toml(broker, "kitchen", extra))
        try:
            link = wait_until(lambda: (kitchen.get("/api/state")["mqtt"] or {}).get("reason"), timeout=20)
            text = json.dumps(kitchen.get("/api/state"))
            assert "s3cret" not in text and str(secret) not in text, link
        finally:
            kitchen.close()
    finally:
        broker.stop()
