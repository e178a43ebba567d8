"""The web layer in-process: language guess, hopper reload and bad input, through Flask's test client."""

from __future__ import annotations

import gzip
import re
import socket
import threading
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from waitress.channel import HTTPChannel

import webui
from launcher.daemon import Daemon
from tests.conftest import MakeDaemon, joined_client, local_config, wait_until
from webui.words import guess_language


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(local_config(tmp_path), virtual=True)


@pytest.fixture
def client(daemon: Daemon) -> FlaskClient:
    return joined_client(daemon)


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (["zh-TW", "en"], "zh-Hant"),
        (["zh-Hant-HK"], "zh-Hant"),
        (["zh-CN"], "zh-Hans"),
        (["zh"], "zh-Hans"),
        (["fr-FR", "zh-HK"], "zh-Hant"),
        (["en-GB", "zh-CN"], "en"),
        (["fr"], "en"),
        ([], "en"),
    ],
)
def test_the_page_language_follows_the_browser(accept: list[str], expected: str) -> None:
    assert guess_language(accept) == expected


def test_the_page_is_served_in_the_guessed_language(client: FlaskClient) -> None:
    page = client.get("/", headers={"Accept-Language": "zh-TW,zh;q=0.8"})
    assert page.status_code == 200
    assert '<html lang="zh-Hant">' in page.get_data(as_text=True)


def test_refilling_the_hopper_resets_its_count_and_the_simulated_one(daemon: Daemon, client: FlaskClient) -> None:
    reply = client.post("/api/hopper", json={"cards": 54})
    assert reply.status_code == 200
    assert reply.get_json() == {"loaded": 54, "dispensed": 0, "remaining": 54}
    state = client.get("/api/state").get_json()
    assert state["hopper"]["remaining"] == state["hardware"]["sim_hopper"] == 54
    assert daemon.bus.events_after(0)[-1].type == "hopper.reloaded"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"cards": 0}, 400, "bad_cards"),
        ({"cards": 501}, 400, "bad_cards"),
        ({"cards": "54"}, 400, "bad_cards"),
        ({"cards": True}, 400, "bad_cards"),
        ({"cards": 5.5}, 400, "bad_cards"),
        ({}, 400, "bad_cards"),
        ({"cards": 54, "colour": "red"}, 400, "unknown_field"),
        ("x" * 100_000, 413, "request_entity_too_large"),
    ],
)
def test_a_bad_reload_is_refused_and_changes_nothing(client: FlaskClient, body: object, status: int, code: str) -> None:
    reply = client.post("/api/hopper", json=body)
    assert reply.status_code == status
    assert reply.get_json()["error"]["code"] == code
    assert client.get("/api/state").get_json()["hopper"]["loaded"] == 112


def test_a_body_that_is_not_json_is_refused(client: FlaskClient) -> None:
    reply = client.post("/api/press", data="press!", content_type="text/plain")
    assert reply.status_code == 415
    assert reply.get_json()["error"]["message"] == "send the body as application/json"
    broken = client.post("/api/press", data="{", content_type="application/json")
    assert broken.status_code == 400
    assert client.get("/api/state").get_json()["presses"] == 0


def test_openapi_describes_every_route_the_app_serves(daemon: Daemon, client: FlaskClient) -> None:
    spec = client.get("/api/openapi.json").get_json()
    assert spec["openapi"].startswith("3.1")
    served: dict[str, set[str]] = {}
    for rule in daemon.app.url_map.iter_rules():
        if rule.rule.startswith("/api/"):
            path = rule.rule.replace("<int:", "{").replace(">", "}")
            served.setdefault(path, set()).update(m.lower() for m in rule.methods - {"HEAD", "OPTIONS"})
    described = {path: set(item) for path, item in spec["paths"].items()}
    # Path parameter names may differ between Flask and the spec; compare the shapes.
    assert {_shape(p): m for p, m in served.items()} == {_shape(p): m for p, m in described.items()}


def _shape(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


KEEPALIVE = (socket.TCP_KEEPIDLE, socket.TCP_KEEPINTVL, socket.TCP_KEEPCNT)


def test_a_phone_that_drops_off_the_wifi_is_given_up_within_30_s(daemon: Daemon) -> None:
    """A vanished phone sends no reset: the connection's own timeouts must end it, or its stream holds a thread for
    the many minutes TCP takes to give up. Loopback cannot lose packets, so this checks what the kernel was told for
    the accepted connection: unacknowledged data for 30 s, or 3 silent probes after 10 s idle, ends it."""
    serving = threading.Thread(target=daemon.server.run, daemon=True)
    serving.start()
    port = int(daemon.urls[0].rstrip("/").rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)):
        accepted = wait_until(lambda: [c.socket for c in list(daemon._sockets.values()) if isinstance(c, HTTPChannel)])
        conn = accepted[0]
        assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 30_000
        assert conn.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        idle, interval, probes = (conn.getsockopt(socket.IPPROTO_TCP, o) for o in KEEPALIVE)
        assert idle + interval * probes <= 30
        assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1  # waitress' own option kept
    daemon.close()
    serving.join(5)
    assert not serving.is_alive()


def test_the_page_travels_gzipped_and_phones_revalidate_it(client: FlaskClient) -> None:
    on_disk = (Path(webui.__file__).parent / "static" / "app.js").read_bytes()
    with client.get("/static/app.js") as plain:
        assert plain.headers.get("Content-Encoding") is None and plain.get_data() == on_disk
    packed = client.get("/static/app.js", headers={"Accept-Encoding": "gzip, deflate"})
    assert packed.headers["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed.headers["Vary"]
    assert gzip.decompress(packed.get_data()) == on_disk
    assert int(packed.headers["Content-Length"]) < len(on_disk) / 2
    etag = packed.headers["ETag"]
    assert etag != plain.headers["ETag"]  # another representation, another validator
    again = client.get("/static/app.js", headers={"Accept-Encoding": "gzip", "If-None-Match": etag})
    assert again.status_code == 304 and again.get_data() == b""
    page = client.get("/", headers={"Accept-Encoding": "gzip"})
    assert page.headers["Content-Encoding"] == "gzip" and b"<html" in gzip.decompress(page.get_data())
    refused = client.post("/api/hopper", json={"cards": 0}, headers={"Accept-Encoding": "gzip"})
    assert refused.headers.get("Content-Encoding") is None  # errors are small: sent as they are


def test_a_daemon_on_every_ipv6_interface_serves_ipv4_phones_too(tmp_path: Path) -> None:
    """`[web] host = "::"`: the addresses printed for phones are the LAN's IPv4 ones, so IPv4 must reach it too
    (found by the red team: it answered ::1 and refused 127.0.0.1)."""
    daemon = Daemon(local_config(tmp_path).replace("web", host="::", port=0))
    serving = threading.Thread(target=daemon.server.run, name="waitress", daemon=True)
    serving.start()
    try:
        port = urllib.parse.urlsplit(daemon.urls[0]).port
        for host in ("127.0.0.1", "[::1]"):
            with urllib.request.urlopen(f"http://{host}:{port}/api/state", timeout=10) as answer:
                assert answer.status == 200, host
    finally:
        daemon.close()
        serving.join(5)
