"""A real Mosquitto broker for the tests: Debian's, on a free loopback port, with a generated config and its
persistence in a temporary directory; stopped (and started again on the same port) by the test."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

BINARY = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Broker:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"mqtt://127.0.0.1:{self.port}"
        self.config = directory / "mosquitto.conf"
        self.config.write_text(
            f"listener {self.port} 127.0.0.1\n"
            "allow_anonymous true\n"
            "persistence true\n"
            f"persistence_location {directory}/\n"
            f"log_dest file {directory}/mosquitto.log\n"
            # Started as root, Mosquitto would become the user `mosquitto`, who cannot reach a test's directory.
            f"user {pwd.getpwuid(os.getuid()).pw_name}\n",
            encoding="utf-8",
        )
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert self._process is None
        self._process = subprocess.Popen([BINARY, "-c", str(self.config)], stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self._process.poll() is not None:
                    break
                time.sleep(0.02)
        raise RuntimeError("mosquitto did not start:\n" + self.log())

    def stop(self) -> None:
        """SIGTERM: Mosquitto saves its retained messages and sessions, as a clean shutdown of the Pi would."""
        if self._process is not None:
            self._process.terminate()
            self._process.wait(10)
            self._process = None

    def kill_and_wipe(self) -> None:
        """kill -9, then its persistence deleted: a power cut before the autosave, or a new broker."""
        if self._process is not None:
            self._process.kill()
            self._process.wait(10)
            self._process = None
        for saved in self.directory.glob("*.db"):
            saved.unlink()

    def log(self) -> str:
        path = self.directory / "mosquitto.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


@contextmanager
def running_broker(directory: Path) -> Iterator[Broker]:
    directory.mkdir(parents=True, exist_ok=True)
    broker = Broker(directory)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


class Listener:
    """A client of the broker that keeps every message it hears, for the tests to look at."""

    def __init__(self, broker: Broker, topic: str = "#", *, client_id: str = "test-listener") -> None:
        self.messages: list[tuple[str, bytes, bool]] = []
        self._lock = threading.Lock()
        self.client = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
        self.client.on_message = self._on_message
        self.client.on_connect = lambda client, *_: client.subscribe(topic, qos=1)
        self.client.reconnect_delay_set(0.1, 0.5)
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = 3600  # a session the broker keeps while it is stopped and started
        self.client.connect("127.0.0.1", broker.port, clean_start=False, properties=properties)
        self.client.loop_start()

    def _on_message(self, client: Any, userdata: Any, message: paho.MQTTMessage) -> None:
        with self._lock:
            self.messages.append((message.topic, bytes(message.payload), bool(message.retain)))

    def on(self, topic: str) -> list[bytes]:
        with self._lock:
            return [payload for t, payload, _ in self.messages if t == topic]

    def publish(self, topic: str, payload: bytes | str, *, retain: bool = False) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(5)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
