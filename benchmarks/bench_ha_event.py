"""A press → Home Assistant's event entity, over a real Mosquitto on loopback, against a bare paho publisher.

The daemon on simulated hardware with `[mqtt]`; a subscriber (Home Assistant's place) on its `moment` topic. For
each press, the time from sending POST /api/press to the subscriber receiving the moment's message. The baseline,
placed alike and measured in the same run, alternating with the daemon's presses: a bare publisher in its own
process behind the same kind of HTTP call (Python's http.server, one paho client, MQTT 5, QoS 1 like the daemon's),
which publishes `{"event_type": "miss"}` the moment the POST arrives, on the same broker to the same subscriber.

Misses are compared (a miss is told as the press is decided, the daemon's own path); a fire's moment comes when
the simulated motor has counted its cards, so its row includes the machine's time and is shown apart.

    .venv/bin/python benchmarks/bench_ha_event.py [--presses 300]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import paho.mqtt.client as paho
from measure import exit_code, parse, percentile
from paho.mqtt.enums import CallbackAPIVersion

from tests.conftest import http_json, start_daemon
from tests.mosquitto import Broker, running_broker
from tests.test_mqtt import mqtt_toml, table_dir

MOMENT = "uno-launcher/kitchen/moment"
STATUS = "uno-launcher/kitchen/status"
BARE = "bare/moment"
ROWS = {
    "bare": "bare paho publisher behind http.server",
    "miss": "daemon, a miss (its decision path)",
    "fire": "daemon, a fire (with the motor's run)",
    "bare answer": "(the bare server's HTTP answer alone)",
    "answer": "(the daemon's HTTP answer alone, a miss)",
}
TARGET_RATIO = 2.0  # the daemon's miss → event p99 at most twice the bare publisher's

# The bare publisher: one paho client, and an HTTP server that publishes on each POST (its own process).
BARE_PUBLISHER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

client = paho.Client(CallbackAPIVersion.VERSION2, client_id="bare-publisher", protocol=paho.MQTTv5)
client.connect("127.0.0.1", int(sys.argv[1]))
client.loop_start()

class Press(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        client.publish("bare/moment", '{"event_type": "miss"}', qos=1)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Press)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


class Heard:
    """Home Assistant's place: every message on the two topics, with the time it arrived."""

    def __init__(self, broker: Broker) -> None:
        self._lock = threading.Lock()
        self.got: dict[str, list[tuple[float, dict[str, object]]]] = {MOMENT: [], BARE: []}
        self.status = b""
        self.client = paho.Client(CallbackAPIVersion.VERSION2, client_id="home-assistant", protocol=paho.MQTTv5)
        self.client.on_message = self._on_message
        ready = threading.Event()
        self.client.on_subscribe = lambda *_: ready.set()
        self.client.on_connect = lambda client, *_: client.subscribe([(MOMENT, 1), (BARE, 1), (STATUS, 1)])
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        assert ready.wait(10), "the subscriber never subscribed"

    def _on_message(self, client: object, userdata: object, message: paho.MQTTMessage) -> None:
        at = time.perf_counter()
        with self._lock:
            if message.topic == STATUS:
                self.status = bytes(message.payload)
            else:
                self.got[message.topic].append((at, json.loads(message.payload)))

    def count(self, topic: str) -> int:
        with self._lock:
            return len(self.got[topic])

    def nth(self, topic: str, n: int) -> tuple[float, dict[str, object]]:
        with self._lock:
            return self.got[topic][n]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def timed_press(url: str, cookie: str | None, heard: Heard, topic: str) -> tuple[float, float, dict[str, object]]:
    """POST a press, wait for its moment: the time to the moment, the time to the HTTP answer, and the moment."""
    n = heard.count(topic)
    began = time.perf_counter()
    status, answer = http_json(url, "POST", {}, cookie=cookie)
    answered = time.perf_counter() - began
    assert status == 200, answer
    deadline = time.monotonic() + 10
    while heard.count(topic) <= n:
        assert time.monotonic() < deadline, f"no message on {topic} for a press"
        time.sleep(0.0002)
    at, body = heard.nth(topic, n)
    return at - began, answered, body


Samples = dict[str, list[float]]


def run(tmp: Path, presses: int) -> Samples:
    with running_broker(tmp / "broker") as broker:
        daemon = start_daemon(table_dir(tmp, "kitchen"), mqtt_toml(broker, "kitchen"))
        bare = subprocess.Popen(
            [sys.executable, "-c", BARE_PUBLISHER, str(broker.port)], stdout=subprocess.PIPE, text=True
        )
        heard = Heard(broker)
        try:
            assert bare.stdout is not None
            bare_url = f"http://127.0.0.1:{bare.stdout.readline().strip()}/api/press"
            deadline = time.monotonic() + 10
            while heard.status != b"online":
                assert time.monotonic() < deadline, "the daemon never came online on the broker"
                time.sleep(0.01)
            samples: Samples = {row: [] for row in ROWS}
            for _ in range(presses):
                took, answered, body = timed_press(daemon.url + "/api/press", daemon.joined.table_cookie, heard, MOMENT)
                kind = "miss" if body["event_type"] == "miss" else "fire"
                samples[kind].append(took)
                if kind == "miss":  # a fire's answer waits for its cards
                    samples["answer"].append(answered)
                took, answered, _ = timed_press(bare_url, None, heard, BARE)
                samples["bare"].append(took)
                samples["bare answer"].append(answered)
                time.sleep(0.03)  # past the launcher's rest after a fire (10 ms here), so no press is refused
            return samples
        finally:
            heard.close()
            bare.terminate()
            bare.wait(10)
            daemon.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=300, help="presses at the daemon, and as many at the bare one")
    args = parse(parser, presses=20)
    with tempfile.TemporaryDirectory() as tmp:
        samples = run(Path(tmp), args.presses)
    print(f"press -> Home Assistant event entity message, {args.presses} presses each, milliseconds")
    print(f"{'path':<46}{'samples':>8}{'p50':>9}{'p99':>9}{'max':>9}")
    for row, name in ROWS.items():
        if samples[row]:
            p50, p99 = percentile(samples[row], 50) * 1e3, percentile(samples[row], 99) * 1e3
            print(f"{name:<46}{len(samples[row]):>8}{p50:>9.2f}{p99:>9.2f}{max(samples[row]) * 1e3:>9.2f}")
    misses, baseline = samples["miss"], samples["bare"]
    ratio50 = percentile(misses, 50) / percentile(baseline, 50)
    ratio99 = percentile(misses, 99) / percentile(baseline, 99)
    print(f"ratio daemon miss/bare: p50 {ratio50:.2f}x, p99 {ratio99:.2f}x")
    passed = ratio99 <= TARGET_RATIO
    print(f"p99 ratio {ratio99:.2f}x (target <= {TARGET_RATIO:g}x): {'PASS' if passed else 'FAIL'}")
    return exit_code(passed, args)


if __name__ == "__main__":
    sys.exit(main())
