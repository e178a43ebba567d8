"""The broker is never silent (issue #46 item 7, issue #45): a link that is not up is logged within 10 s, then at
growing intervals; a refusal at once; /api/state says which, for how long and why."""

from __future__ import annotations

import itertools
import logging

import pytest

from launcher.home.mqtt_link import REFUSALS_PER_MINUTE, MqttLink, RefusalLog
from tests.virtual_clock import VirtualClock


def logged_at(link: MqttLink, clock: VirtualClock, caplog: pytest.LogCaptureFixture, until: float) -> list[float]:
    """The times the link logged itself, ticked as the inbox ticks it (at the wait it asks for)."""
    times = []
    while clock.now() < until:
        before = len(caplog.records)
        wait = link.tick()
        if len(caplog.records) > before:
            times.append(clock.now())
        clock.advance(min(wait, until - clock.now()) or 0.001)
    return times


def test_an_unreachable_broker_is_logged_within_10_s_then_at_growing_intervals(
    clock: VirtualClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "launcher.home.mqtt_link")
    link = MqttLink("mqtt://pi.local", clock=clock)
    link.down("[Errno 111] Connection refused")
    times = logged_at(link, clock, caplog, until=2000)
    assert times[0] <= 10
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(times) >= 6 and all(later > earlier for earlier, later in itertools.pairwise(gaps))
    assert "Connection refused" in caplog.records[0].getMessage()
    assert "mqtt://pi.local" in caplog.records[0].getMessage()
    assert link.view() == {"state": "trying", "for_s": 2000, "reason": "[Errno 111] Connection refused"}


def test_a_tls_failure_is_in_the_log_and_the_state(clock: VirtualClock, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "launcher.home.mqtt_link")
    link = MqttLink("mqtts://pi.local", clock=clock)
    link.down("TLS: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    logged_at(link, clock, caplog, until=10)
    assert "CERTIFICATE_VERIFY_FAILED" in caplog.text
    assert link.view()["reason"].startswith("TLS:")


def test_a_refusal_is_logged_at_once_and_once_and_a_link_back_up_is_quiet(
    clock: VirtualClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "launcher.home.mqtt_link")
    link = MqttLink("mqtt://pi.local", clock=clock)
    link.down("Bad user name or password", refused=True)
    link.down("Bad user name or password", refused=True)
    assert [r.levelname for r in caplog.records] == ["ERROR"]
    assert link.view()["state"] == "refused"
    link.up()
    caplog.clear()
    assert logged_at(link, clock, caplog, until=4000) == []
    assert link.view() == {"state": "connected", "for_s": 4000, "reason": None}
    link.down("Keep alive timeout")  # lost: logged FIRST_LOG_S after the loss, not at once
    assert logged_at(link, clock, caplog, until=4010)[0] == pytest.approx(4005, abs=0.01)


def test_a_flood_of_refused_messages_is_named_up_to_a_budget_then_counted(
    clock: VirtualClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "launcher.home.mqtt_link")
    refusals = RefusalLog(clock=clock)
    for n in range(10_000):
        refusals.refused(f"uno-launcher/tournament/0123456789ab/round/x/{n}", "not signed")
    assert len(caplog.records) == REFUSALS_PER_MINUTE
    assert "round/x/0" in caplog.records[0].getMessage() and "not signed" in caplog.records[0].getMessage()
    clock.advance(60)
    refusals.refused("uno-launcher/tournament/next", "not signed")
    lines = [r.getMessage() for r in caplog.records[REFUSALS_PER_MINUTE:]]
    assert lines[0] == f"{10_000 - REFUSALS_PER_MINUTE} more MQTT messages refused in the last minute"
    assert "tournament/next" in lines[1]
