"""paho's network thread never waits on the table (issue #46 item 7): what its callbacks bring is done on the
bridge's own `mqtt-inbox` thread, so a new shuffle that holds the board for long does not hold up the link."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from launcher.config import from_mapping
from launcher.events import EventBus, EventType
from launcher.home.home_assistant import HomeAssistant
from launcher.home.mqtt import MqttBridge, Snapshot
from launcher.home.mqtt_link import MqttLink
from launcher.home.tournament import TournamentBook
from launcher.home.tournament_post import TournamentPost
from launcher.store import Store
from tests.conftest import wait_until
from tests.mosquitto import Broker, Listener, running_broker


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    with running_broker(tmp_path / "broker") as running:
        yield running


@pytest.mark.slow
def test_a_new_shuffle_that_blocks_holds_up_neither_the_link_nor_the_outbox(tmp_path: Path, broker: Broker) -> None:
    config = from_mapping({"mqtt": {"broker": broker.url, "table": "kitchen", "allow_new_shuffle": True}}).mqtt
    store = Store(tmp_path / "launcher.sqlite3")
    bus = EventBus(store)
    release, asked = threading.Event(), threading.Event()
    threads: list[str] = []

    def new_shuffle() -> None:  # the board, busy for as long as the test says
        threads.append(threading.current_thread().name)
        asked.set()
        release.wait(30)

    book = TournamentBook(store, bus, table="kitchen")
    bridge = MqttBridge(
        config,
        bus=bus,
        store=store,
        tournaments=TournamentPost(book, check_store=lambda: None),
        link=MqttLink(config.broker),
        snapshot=lambda: Snapshot(hopper=10, fault=False),
        new_shuffle=new_shuffle,
        home=HomeAssistant(config, page_url=lambda: "http://127.0.0.1:8080/"),
    )
    home = Listener(broker, "uno-launcher/kitchen/#", client_id="home-assistant")
    try:
        bridge.start()
        wait_until(lambda: bridge.link.view()["state"] == "connected")
        for _ in range(40):  # "connected" comes before the broker's SUBACK: pressed until the bridge hears it
            home.publish("uno-launcher/kitchen/command/new_shuffle", b"PRESS")
            if asked.wait(0.25):
                break
        assert asked.is_set()
        # While the new shuffle holds the inbox, the network thread still sends and takes acknowledgements.
        event = bus.publish(EventType.HOPPER_CHANGED, {"remaining": 7})
        wait_until(lambda: bridge.sent >= event.id)
        wait_until(lambda: home.on("uno-launcher/kitchen/state/hopper")[-1:] == [b"7"])
        assert bridge.connected and bridge.link.view()["state"] == "connected"
        assert set(threads) == {"mqtt-inbox"}
    finally:
        release.set()
        home.close()
        bridge.close()
        bus.close()
