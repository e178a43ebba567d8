"""firmware/main.py under the real MicroPython (Debian's unix port), not CPython: the board's own `run()` loop with
MicroPython's select.poll, ticks and kbd_intr, and the shared framing code, against the real host link and daemon.

The same scenarios as the CPython stand-in's end-to-end tests (tests/test_firmware.py on a pty,
tests/test_serial_daemon.py), plus what only an interpreter of the board's kind can show: that the firmware's
Python is MicroPython's (the framing bytes agree with CPython's), and its guarantees on MicroPython's own clock.
The interpreter comes from scripts/lab-micropython (scripts/test fetches it); tests/real_micropython.py says how.
"""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.config import DispenseConfig, from_mapping
from launcher.daemon import Daemon
from launcher.hardware import framing
from launcher.hardware.base import StopReason
from launcher.hardware.framing import EVENT, Frame, encode
from launcher.hardware.serial_link import SerialHardware
from tests.conftest import MakeDaemon, wait_until
from tests.real_micropython import MicroPythonBoard, board_on_pipes, micropython, run_script
from tests.sim_board import board

__all__ = ["micropython"]  # the fixture, imported for the tests below

HEX8 = "0123456789ABCDEF"


def fields(frame: Frame) -> dict[str, str]:
    return dict(a.split("=", 1) for a in frame.args)


def events(pico: MicroPythonBoard, name: str) -> list[tuple[str, ...]]:
    return [f.args for f in list(pico.frames) if f.seq == EVENT and f.cmd == name]


# --- the shared framing code, byte for byte ---------------------------------------------------------------------

FRAMES = [
    (1, "HELLO", ()),
    (65535, "FIRE", (3, 4000, 80)),
    (EVENT, "DONE", (3, 412, "count", 1)),
    (2, "CONFIG", ("jam_ms=1200", "card_gap_ms=4", "stuck_ms=400", "reverse_ms=40")),
    (EVENT, "BTN", (81234,)),
]


def test_the_framing_code_gives_the_same_bytes_under_micropython(micropython: Path) -> None:
    rng = random.Random(7)
    noise = bytes(rng.randrange(256) for _ in range(3000)) + b"\n" + b"A" * 400 + b"\n\x03\r\n"
    stream = b"".join(encode(*f) for f in FRAMES) + noise + encode(9, "PING") + b"\r\n"
    code = f"""
import framing
print(framing.crc16(b"123456789"))
for seq, cmd, args in {FRAMES!r}:
    print(framing.encode(seq, cmd, args).decode().strip())
parser = framing.Parser()
frames = []
data = {stream!r}
for i in range(0, len(data), 7):  # in pieces, as a serial port delivers them
    frames += parser.feed(data[i:i + 7])
for f in frames:
    print(f.seq, f.cmd, " ".join(f.args))
print("bad", parser.bad)
"""
    out = run_script(micropython, code).splitlines()
    parser = framing.Parser()
    frames = []
    for i in range(0, len(stream), 7):
        frames += parser.feed(stream[i : i + 7])
    expected = [str(0x29B1)]
    expected += [encode(*f).decode().strip() for f in FRAMES]
    expected += [f"{f.seq} {f.cmd} {' '.join(f.args)}" for f in frames]
    expected += [f"bad {parser.bad}"]
    assert out == expected
    assert parser.bad >= 2 and len(frames) == len(FRAMES) + 1


MISFITS = [
    (EVENT, "DONE", ("3", "412", "count")),
    (EVENT, "DONE", ("3", "4x2", "count", "1")),
    (EVENT, "LID", ("open", "now")),
    (EVENT, "WARP", ()),
    (7, "FIRE", ("+3", "4000", "80")),
    (7, "BTN", ("1",)),
]


def test_the_message_table_reads_and_refuses_alike_under_micropython(micropython: Path) -> None:
    """framing.MESSAGES is read on the board too: named fields, optional ones and the refusals' words agree."""
    code = f"""
import framing
print(framing.event("DONE", fire=1, reason="count", ms=412, dispensed=3).decode().strip())
print(framing.event("BTN", ms=81234).decode().strip())
m = framing.parse(framing.Frame(5, "FIRE", ("03", "4000", "80")))
print(m.cards, m.max_ms, m.pwm, framing.parse(framing.Frame("E", "BTN", ("9",))).fire)
for seq, cmd, args in {MISFITS!r}:
    try:
        framing.parse(framing.Frame(seq, cmd, args))
        print("taken")
    except framing.Refused as e:
        print(e)
"""
    out = run_script(micropython, code).splitlines()
    expected = ["E DONE 3 412 count 1 *3E80", "E BTN 81234 *7E48", "3 4000 80 None"]
    for frame in MISFITS:
        with pytest.raises(framing.Refused) as refused:
            framing.parse(Frame(*frame))
        expected.append(str(refused.value))
    assert out == expected


# --- run(): the board's loop -------------------------------------------------------------------------------------


def test_run_is_the_board_loop(micropython: Path) -> None:
    with board_on_pipes(micropython, heartbeat=False) as pico:
        pico.write(encode(1, "HELLO") + b"\x03\n" + encode(2, "PING"))
        boot, hello, ping = pico.wait_frames(3)[:3]
        assert boot.seq == EVENT and boot.cmd == "BOOT" and len(boot.args[0]) == 8
        assert all(ch in HEX8 for ch in boot.args[0])
        assert hello.seq == 1 and fields(hello)["boot"] == boot.args[0] and fields(hello)["fw"] == "5"
        assert fields(hello)["lid"] == "closed" and fields(hello)["beam"] == "clear"
        assert ping.seq == 2 and fields(ping)["state"] == "IDLE"  # the 0x03 byte was data, not Ctrl-C
        # The pins' pipe is read on a thread of its own, maybe behind the serial line: "wdt" comes before "fed" on it.
        wait_until(lambda: pico.said("fed"), 5, "the watchdog fed by the loop")
        assert pico.said("wdt") == [f"wdt {board.WDT_MS}"]
        assert pico.process.poll() is None
        # Lit while the host has armed the board: by a pass after HELLO's, perhaps after the "fed" seen above.
        wait_until(lambda: pico.outputs.get("LED") == 1, 5, f"the LED lit, not {pico.outputs.get('LED')}")


def test_run_keeps_the_repl_when_the_button_is_held_at_boot(micropython: Path) -> None:
    pico = MicroPythonBoard(micropython, None, button_held=True)
    try:
        assert pico.wait_exit(30) == 0, pico.diagnosis()  # run() returned: the REPL would be the user's
        assert b"REPL" in pico.text and pico.frames == []
        assert pico.said("wdt") == []  # no watchdog, so mpremote can copy new files
    finally:
        pico.close()


def test_a_retransmitted_fire_is_answered_again_and_never_fires_again(micropython: Path) -> None:
    # No heartbeat: any line between a command and its copy makes the copy a new command. Cards far apart: the
    # count must be exact (see below).
    with board_on_pipes(micropython, heartbeat=False, cards_per_second=8.33) as pico:
        pico.write(encode(1, "HELLO") + encode(2, "CONFIG", ("min_rest_ms=0",)))
        pico.reply(2)
        fire = encode(7, "FIRE", (2, 4000, 80))
        pico.write(fire)
        first = pico.reply(7)
        assert first == Frame(7, "OK", ("fire=1",))
        pico.write(fire)  # the host's copy after a lost reply
        wait_until(lambda: len([f for f in pico.frames if f.seq == 7]) == 2, 10, "the second answer")
        wait_until(lambda: events(pico, "DONE"), 10, "the fire's end")
        assert [f for f in pico.frames if f.seq == 7] == [first, first]
        status = fields(pico.reply_to(8, "STATUS"))
        assert status["replays"] == "1" and status["cards"] == "2" and status["fire"] == "1"
        assert pico.motor.starts == 1 and pico.world.cards_out == 2
        assert events(pico, "DONE") == [("2", events(pico, "DONE")[0][1], "count", "1")]


def test_an_armed_press_starts_the_motor_on_the_board_itself(micropython: Path) -> None:
    # The test is the host and does nothing at the press: the board fires from the arm on its own.
    with board_on_pipes(micropython, cards_per_second=8.33) as pico:
        pico.write(encode(1, "HELLO") + encode(2, "CONFIG", ("min_rest_ms=0",)))
        pico.reply(2)
        assert pico.reply_to(3, "ARM", 2, 4000, 80) == Frame(3, "OK", ("fire=0",))
        assert fields(pico.reply_to(4, "STATUS"))["armed"] == "2"
        pico.click()
        wait_until(lambda: events(pico, "DONE"), 10, "the fire's end")
        [(press_ms, fire)] = events(pico, "BTN")
        assert fire == "1"
        order = [f.cmd for f in list(pico.frames) if f.seq == EVENT and f.cmd in ("BTN", "CARD")]
        assert order == ["BTN", "CARD", "CARD"]
        assert events(pico, "DONE")[0][::2] == ("2", "count") and pico.world.cards_out == 2
        wait_until(lambda: pico.motor.duty == 0, 5, "the motor off")
        on_ms = next(ticks for _, duty, ticks in pico.motor.history if duty)
        # The pass that sees the press starts the motor: the same ms, or later only by a pass the machine held up.
        assert 0 <= on_ms - int(press_ms) < 1000, (press_ms, on_ms)
        assert pico.motor.starts == 1 and fields(pico.reply_to(5, "STATUS"))["armed"] == "none"


def test_the_release_follows_the_press_under_micropython(micropython: Path) -> None:
    with board_on_pipes(micropython) as pico:
        pico.write(encode(1, "HELLO"))
        pico.reply(1)
        pico.press()
        [(press_ms,)] = wait_until(lambda: events(pico, "BTN"), 10, "the press")
        assert events(pico, "UP") == []  # still down
        pico.release()
        [(last_down_ms,)] = wait_until(lambda: events(pico, "UP"), 10, "the release")
        assert int(last_down_ms) >= int(press_ms)
        order = [f.cmd for f in list(pico.frames) if f.seq == EVENT and f.cmd in ("BTN", "UP")]
        assert order == ["BTN", "UP"]


def test_a_board_process_the_os_keeps_waiting_still_lets_out_exactly_the_cards_asked(micropython: Path) -> None:
    # A loaded test machine can stop the board's process for longer than a card takes, which a real board never is:
    # the simulated roller waits with it (tests/real_micropython.py), so counts stay exact under any load.
    # The jam check is set far off: a board stopped that long rightly takes the silent beam for a jam.
    with board_on_pipes(micropython, heartbeat=False, cards_per_second=8.33) as pico:
        pico.write(encode(1, "HELLO") + encode(2, "CONFIG", ("min_rest_ms=0", "jam_ms=10000")))
        pico.reply(2)
        pico.write(encode(3, "FIRE", (3, 4000, 80)))
        assert pico.reply(3).cmd == "OK"
        wait_until(lambda: pico.world.cards_out >= 1, 10, "the first card")
        pico.process.send_signal(signal.SIGSTOP)
        time.sleep(0.5)  # the interleaving itself: three cards' time with the board not running
        pico.process.send_signal(signal.SIGCONT)
        wait_until(lambda: events(pico, "DONE"), 10, "the fire's end")
        done = events(pico, "DONE")[0]
        assert (done[0], done[2], pico.world.cards_out) == ("3", "count", 3), (done, pico.diagnosis())


def test_host_silence_stops_the_motor_after_1500_ms_of_the_boards_clock(micropython: Path) -> None:
    with board_on_pipes(micropython, heartbeat=False, cards_per_second=0.5) as pico:
        pico.write(encode(1, "HELLO") + encode(2, "CONFIG", ("jam_ms=10000",)))
        pico.reply(2)
        pico.write(encode(3, "FIRE", (5, board.MAX_RUN_MS, 80)))  # the last the board hears
        assert pico.reply(3).cmd == "OK"
        wait_until(lambda: events(pico, "DONE"), 10, "the board to give up on the host")
        # The motor's writes come on a pipe of their own, read by another thread: DONE may be read first.
        wait_until(lambda: pico.motor.duty == 0, 5, "the motor off")
        [(_, on, on_ms), *_, (_, off, off_ms)] = pico.motor.history
        assert on > 0 and off == 0
        silent_ms = off_ms - on_ms  # MicroPython's ticks_ms, from the FIRE heard to the motor off
        assert silent_ms >= 1499, silent_ms  # never sooner; later only by a loop pass the machine held up
        assert silent_ms < 3000, silent_ms
        assert events(pico, "DONE")[0][2] == "safe" and pico.reverse.starts == 0
        assert pico.reply_to(4, "FIRE", 1, 1000, 80).args == ("safe",)
        assert fields(pico.reply_to(5, "PING"))["state"] == "SAFE"  # heard, but only HELLO re-arms
        assert fields(pico.reply_to(6, "HELLO"))["state"] == "IDLE"
        assert pico.motor.starts == 1


def test_the_lid_stops_the_motor_and_refuses_fires_until_closed(micropython: Path) -> None:
    with board_on_pipes(micropython, cards_per_second=0.5) as pico:
        pico.write(encode(1, "HELLO") + encode(2, "CONFIG", ("min_rest_ms=0", "jam_ms=10000")))
        pico.reply(2)
        assert pico.reply_to(3, "FIRE", 3, 4000, 80).cmd == "OK"
        wait_until(lambda: pico.motor.duty > 0, 5, "the motor on")
        pico.open_lid()
        wait_until(lambda: events(pico, "LID"), 5, "the lid's event")
        # The pins' state comes on a pipe of its own, which may be read a moment after the serial line's event.
        wait_until(lambda: pico.motor.duty == 0, 1, "the motor off at the lid")
        assert events(pico, "DONE")[0][2] == "lid"
        assert pico.reply_to(4, "FIRE", 1, 1000, 80).args == ("lid",)
        pico.close_lid()
        wait_until(lambda: events(pico, "LID") == [("open",), ("closed",)], 5, "the lid closed")
        assert pico.reply_to(5, "FIRE", 1, 1000, 80).cmd == "OK"


def test_noise_never_becomes_a_command_and_never_stops_the_board(micropython: Path) -> None:
    rng = random.Random(3)
    with board_on_pipes(micropython) as pico:
        pico.write(encode(1, "HELLO"))
        pico.reply(1)
        noise = b"\x03\x03\x04" + bytes(rng.randrange(256) for _ in range(2000)) + b"\n" + b"A" * 5000 + b"\n"
        pico.write(noise + encode(2, "FIRE", (3, 4000, 80))[:-8] + b"*0000\n")  # a FIRE with a wrong CRC
        status = fields(pico.reply_to(3, "STATUS"))
        assert int(status["bad"]) >= 2 and status["state"] == "IDLE" and status["fire"] == "0"
        assert pico.motor.starts == 0 and pico.process.poll() is None


# --- end to end: the real host link and the real daemon on a pty --------------------------------------------------


@pytest.fixture
def link(tmp_path: Path) -> Path:
    return tmp_path / "usb-MicroPython_Board_in_FS_mode_E6614C311B7A3B2A-if00"


def test_a_press_on_the_board_fires_cards_through_the_host(micropython: Path, link: Path) -> None:
    # Cards 150 ms apart: the simulated roller runs in real time, so a firmware process the host's scheduler keeps
    # waiting longer than one card's time would let one more card out (seen once beside a load on both cores).
    with (
        MicroPythonBoard(micropython, link, cards_per_second=8.33) as pico,
        SerialHardware(port=str(link), dispense=DispenseConfig(jam_ms=500)) as host,
    ):
        wait_until(lambda: host.describe()["link"] == "up", 15, "the link up")
        jobs = []
        host.inputs.when_pressed = lambda: jobs.append(host.dispenser.start(3))
        pico.click()
        wait_until(lambda: jobs, 10, "the press")
        result = jobs[0].wait(10)
        assert (result.requested, result.dispensed, result.stop) == (3, 3, StopReason.COUNT), pico.diagnosis()
        assert pico.motor.starts == 1 and pico.world.cards_out == 3
        described = host.describe()
        assert described["backend"] == "serial" and described["port"] == str(link) and described["link"] == "up"
        assert len(str(described["boot_id"])) == 8


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path, link: Path) -> Daemon:
    config = from_mapping(
        {
            "hardware": {"backend": "serial"},
            "serial": {"port": str(link)},
            "dispense": {"min_rest_ms": 0, "jam_ms": 500},
            "state": {"dir": str(tmp_path / "state")},
            "web": {"port": 0},
        }
    )
    return make_daemon(config)


def event_types(daemon: Daemon) -> list[str]:
    return [e.type for e in daemon.bus.events_after(0)]


def _within(seconds: float, done: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_press_on_the_board_fires_cards_through_the_daemon(micropython: Path, link: Path, daemon: Daemon) -> None:
    with MicroPythonBoard(micropython, link, hopper=100, cards_per_second=8.33) as pico:  # exact counts: see above
        wait_until(lambda: daemon.controller.snapshot()["fault"] is None, 15, "the board ready")
        for _ in range(30):  # the schedule misses about two presses in three
            before = len(event_types(daemon))
            for _ in range(5):  # the board re-arms its button debounce_ms after a release, at its next poll
                time.sleep(0.08)
                pico.click()
                if _within(3.0, lambda b=before: len(event_types(daemon)) > b):
                    break
            wait_until(
                lambda b=before: not daemon.controller.snapshot()["busy"] and len(event_types(daemon)) > b + 1, 15
            )
            if "launcher.fired" in event_types(daemon):
                break
        found = daemon.bus.events_after(0)
        pressed = [e.data for e in found if e.type == "button.pressed"]
        fired = [e.data for e in found if e.type == "launcher.fired"]
        assert pressed and all(p["source"] == "button" for p in pressed)
        assert fired and all(f["dispensed"] == f["requested"] for f in fired), pico.diagnosis()

        # Every card that left the launcher is one the daemon reports, once it is idle. Counted again at each look:
        # on a loaded machine a click retried above can be a second press, firing after `fired` was read.
        def reported() -> int:
            return sum(e.data["dispensed"] for e in daemon.bus.events_after(0) if e.type == "launcher.fired")

        settled = _within(10, lambda: not daemon.controller.snapshot()["busy"] and pico.world.cards_out == reported())
        assert settled, (pico.world.cards_out, reported(), event_types(daemon), pico.diagnosis())
        assert daemon.controller.snapshot()["hopper"]["dispensed"] == pico.world.cards_out
        assert daemon.hardware.describe()["backend"] == "serial"


def test_a_replugged_board_is_taken_back_without_a_restart(micropython: Path, link: Path, daemon: Daemon) -> None:
    with MicroPythonBoard(micropython, link):
        wait_until(lambda: daemon.controller.snapshot()["fault"] is None, 15, "the board ready")
        first_boot = daemon.hardware.describe()["boot_id"]
    wait_until(lambda: (daemon.controller.snapshot()["fault"] or "").startswith("launcher board:"), 15)
    assert "hardware.fault" in event_types(daemon)
    with MicroPythonBoard(micropython, link) as pico:
        wait_until(lambda: daemon.controller.snapshot()["fault"] is None, 15, "the new board ready")
        second_boot = daemon.hardware.describe()["boot_id"]
        assert second_boot != first_boot  # a new boot id: random.getrandbits on the board
        ok = [e.data for e in daemon.bus.events_after(0) if e.type == "hardware.ok"]
        assert ok and f"{second_boot} ready" in ok[-1]["message"]
        ticket = daemon.controller.press("web")
        assert ticket.wait(10), pico.diagnosis()
