"""The launcher on a microcontroller board over USB serial: the host end of the link to `firmware/`.

Modelled on Klipper's host/MCU link, simplified to the ASCII lines of `framing` (docs/FIRMWARE.md). The board
times the motor and counts the cards; the host only asks. Three parts, each with its own thread, stopped by
`close()`:

- the port keeper (`serial_port`) opens the port, again by the same `/dev/serial/by-id/` path after an unplug,
  and reads it: replies go to the session, events to the fire tracker and the callbacks;
- the session (`serial_session`) is the only writer: HELLO and CONFIG, one command in flight, retransmits and
  heartbeats;
- the dispatcher runs `when_pressed`, `when_lid_changed` and `when_link_changed` in order, so a slow callback
  never stalls the wire.

The fire tracker (`serial_fires`) follows the fire in progress. A FIRE is never executed twice: the board answers
a retransmission from memory, a board that has restarted is SAFE until HELLO and refuses it, and the host never
sends a FIRE again once its session (one port opening and one boot id) has ended: it fails the job instead.

The reflex (firmware 5 on): armed with the next press's fire (`arm`), the board starts the motor on its own button
within a pass of its loop, whatever the host is doing, and the host hears of it after (`when_reflex`); armed with 0
cards, it tells of the press and fires nothing, so a miss is armed as a fire is, in a line of the same length.
`disarm` takes the arm back before the host decides anything itself, and answers the fire the board made first, if
it did. What the board is armed with is never in `describe()`: the next press is the board's secret.

Every wait runs on the injected clock (real by default).
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import DispenseConfig
from launcher.hardware import framing
from launcher.hardware.base import Closing, FireJob, HardwareGone, NoCues, StopReason
from launcher.hardware.serial_fires import FireTracker, SerialFireJob, fields
from launcher.hardware.serial_port import Opener, PortKeeper, SerialPort, wait_for
from launcher.hardware.serial_session import REPLY_TIMEOUT_S, TRIES, Request, Session, config_args
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)

# The first firmware version armed: 5, which takes an ARM of 0 cards for a miss. Versions 3 and 4 know ARM only
# for a fire, and arming only the fires would tell anyone who can see the wire which presses fire: never armed.
REFLEX_FIRMWARE = 5
RELEASE_FIRMWARE = framing.since("UP")  # the first that tells the button's release
MAX_CARDS = 99  # the firmware's most cards in one fire: two digits
DISARM_WAIT_S = 2 * TRIES * REPLY_TIMEOUT_S  # the command in flight's tries, then DISARM's own


class LinkDown(HardwareGone):
    """`start()` while no board is connected and ready."""


class SerialInputs:
    """The board's inputs as the controller sees them. Callbacks run on the link's dispatcher thread."""

    def __init__(self) -> None:
        self.when_pressed: Callable[[], None] | None = None
        self.when_lid_changed: Callable[[bool], None] | None = None  # called with True when the lid opens
        # The button down (True, after any press it made) and let go (False), for holding it down: from firmware 4
        # on, and let go as well when the link is lost while it was down.
        self.when_button_changed: Callable[[bool], None] | None = None
        self.lid_open: bool | None = None  # None until the board has said


class SerialDispenser:
    """The motor on the board, through the link."""

    def __init__(self, hardware: SerialHardware) -> None:
        self._hardware = hardware
        self.when_card: Callable[[], None] | None = None  # each card as the board reports it, on the dispatcher
        self.when_reflex: Callable[[FireJob], None] | None = None  # a fire from the arm, on the dispatcher

    def start(self, cards: int) -> SerialFireJob:
        """Queue a FIRE and return at once. LinkDown if no board is ready, RuntimeError if a fire is running."""
        return self._hardware._start(cards)

    def stop(self) -> None:
        """Motor off: cancel a FIRE not yet sent and send STOP. Safe from any thread; never blocks or raises."""
        self._hardware._stop_motor()

    def arm(self, cards: int) -> bool:
        """Have the board fire `cards` on its own next press (0: none, a miss the host decides; replacing an earlier
        arm); returns at once. False when the board cannot (no link, an older firmware, a fire in progress)."""
        return self._hardware._arm(cards)

    def disarm(self) -> SerialFireJob | None:
        """Take the arm back, waiting for the board's answer: the job of the last fire it made from an arm (the
        caller tells whether it is new), or None."""
        return self._hardware._disarm()


class Dispatcher:
    """Runs callbacks one after the other on the `serial-dispatch` thread; a failing one is logged."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._cond = clock.condition()
        self._calls: collections.deque[Callable[[], None]] = collections.deque()
        self._thread = StoppableThread(self._run, "serial-dispatch", clock=clock, wake=self._wake)
        self._thread.start()

    def put(self, call: Callable[[], None]) -> None:
        with self._cond:
            self._calls.append(call)
            self._cond.notify_all()

    def close(self) -> None:
        """Run what is queued, then stop."""
        self._thread.stop()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                wait_for(self._cond, self._clock, lambda: bool(self._calls) or self._thread.stopping.is_set(), None)
                if not self._calls:
                    return
                call = self._calls.popleft()
            try:
                call()
            except Exception:  # one failing listener must not stop the callbacks after it
                log.exception("a serial link callback failed")


class SerialHardware(Closing):
    """A launcher board on a serial port (firmware/ on a Raspberry Pi Pico). Closable twice; a context manager.

    `dispense` is the `[dispense]` section: `pwm` and `max_run_ms` go with every FIRE, the board's settings in
    CONFIG. `when_link_changed(ok, message)` is called, on the dispatcher thread, whenever the link comes up or goes
    down. `opener` opens the port (by default `port` through pyserial).
    """

    def __init__(
        self,
        *,
        port: str,
        dispense: DispenseConfig,
        baudrate: int = 115200,
        when_link_changed: Callable[[bool, str], None] | None = None,
        clock: Clock = REAL_CLOCK,
        opener: Opener | None = None,
    ) -> None:
        if not 0 < dispense.pwm <= 1:
            raise ValueError(f"pwm must be above 0 and at most 1, not {dispense.pwm}")
        for name, value in (("max_run_ms", dispense.max_run_ms), ("baudrate", baudrate)):
            if value < 1:
                raise ValueError(f"{name} must be positive, not {value}")
        self.port = port
        self.baudrate = baudrate
        self._max_run_ms = dispense.max_run_ms
        self._pwm_percent = max(1, min(100, round(dispense.pwm * 100)))
        self.when_link_changed = when_link_changed
        self._clock = clock
        self.inputs = SerialInputs()
        self.cues = NoCues()  # the board has no light or buzzer of ours
        self.dispenser = SerialDispenser(self)

        self._cond = clock.condition()
        self._dispatch = Dispatcher(clock)
        self._firmware = 0  # the board's version, from HELLO
        self._button_down = False  # told down (E BTN) and not yet up (E UP)
        self._told_old_firmware = False  # the warning that a hold needs firmware 4, given once
        self._last_reflex: SerialFireJob | None = None
        self._arm_sent = False  # an ARM went out since the last DISARM: its answer may not be read yet
        self._fires = FireTracker(clock=clock, max_run_ms=dispense.max_run_ms, on_reflex=self._reflexed)
        # The board's events (framing.MESSAGES declares their fields): name -> (handler, heard before the link is up).
        self._handlers: dict[str, tuple[Callable[[framing.Message], None], bool]] = {
            "BOOT": (self._on_boot, True),
            "LID": (self._on_lid, True),
            "BTN": (self._on_btn, False),
            "UP": (self._on_up, False),
            "CARD": (self._on_card, False),
            "JAM": (self._on_news, False),
            "STUCK": (self._on_news, False),
            "EMPTY": (self._on_news, False),
            "DONE": (self._on_done, False),
        }
        self._keeper = PortKeeper(
            opener or (lambda: SerialPort(port, baudrate)),
            name=port,
            cond=self._cond,
            clock=clock,
            on_frame=self._route,
            on_unavailable=lambda why: self._session.set_link(False, why),
        )
        self._session = Session(
            self._keeper,
            self._fires,
            config=config_args(dispense),
            cond=self._cond,
            clock=clock,
            on_hello=self._hello,
            on_link=self._link_changed,
        )
        self._session.start()
        self._keeper.start()

    # --- the backend interface ------------------------------------------------------------------------------

    def describe(self) -> dict[str, object]:
        with self._cond:
            session = self._session
            return {
                "backend": "serial",
                "port": self.port,
                "runs_on": "a board on USB",  # the motor, under firmware/main.py at the version below
                "link": {None: "connecting", True: "up", False: "down"}[session.link_up],
                "message": session.message,
                "boot_id": session.boot_id,
                "board_state": session.board_state,
                "firmware": self._firmware,
                "hopper_empty": self._fires.hopper_empty,
                "retransmits": session.retransmits,
                "restarts": session.restarts,
                "bad_frames": self._keeper.bad_frames,
            }

    def close(self) -> None:
        """Motor off (a last STOP if the board is there), threads stopped, port closed. Safe to call twice."""
        with self._cond:
            if self._session.closing:
                return
            self._cancel_queued_fire()
            if self._session.link_up:
                self._session.submit(Request("STOP"), first=True)
        self._session.close()
        self._keeper.close()
        with self._cond:
            self._fires.fail(StopReason.ABORTED)
        self._dispatch.close()

    # --- dispenser ---------------------------------------------------------------------------------------------

    def _start(self, cards: int) -> SerialFireJob:
        if cards < 1:
            raise ValueError(f"cards must be at least 1, not {cards}")
        with self._cond:
            if self._session.closing:
                raise LinkDown("the serial link is closed")
            if not self._session.ready:
                raise LinkDown(f"the launcher board is not ready: {self._session.message}")
            job = self._fires.start(cards)
            self._session.submit(Request("FIRE", job, cards=cards, max_ms=self._max_run_ms, pwm=self._pwm_percent))
        return job

    def _stop_motor(self) -> None:
        with self._cond:
            self._cancel_queued_fire()
            self._withdraw_arm()  # the STOP drops one already sent
            if self._session.ready and not self._session.queued("STOP"):
                self._session.submit(Request("STOP"), first=True)

    def _arm(self, cards: int) -> bool:
        if not 0 <= cards <= MAX_CARDS:
            raise ValueError(f"cards must be from 0 to {MAX_CARDS}, not {cards}")
        with self._cond:
            if not self._session.ready or self._firmware < REFLEX_FIRMWARE or self._fires.job is not None:
                return False
            self._withdraw_arm()
            self._arm_sent = True
            self._fires.arming(cards)
            # Two digits whatever the cards: a miss's line is as long as a fire's.
            self._session.submit(Request("ARM", cards=f"{cards:02d}", max_ms=self._max_run_ms, pwm=self._pwm_percent))
            return True

    def _disarm(self) -> SerialFireJob | None:
        with self._cond:
            self._withdraw_arm()
            sent, self._arm_sent = self._arm_sent, False
            if (sent or self._fires.armed is not None) and self._session.ready:
                request = Request("DISARM")
                self._session.submit(request, first=True)
                session = self._session
                # Its answer, read in the wire's order, tells of a fire the board made from the arm first.
                wait_for(self._cond, self._clock, lambda: request.reply is not None or not session.ready, DISARM_WAIT_S)
            # Not answered, the link is lost: the session's end fails any fire, and the board drops its arm when it
            # stops hearing the host or is greeted again.
            return self._last_reflex

    def status(self) -> dict[str, str]:
        """The board's full STATUS (`beam`, `lid`, `state`, ...) as it answers it now; {} without a link."""
        with self._cond:
            if not self._session.ready:
                return {}
            request = Request("STATUS")
            self._session.submit(request)
            session = self._session
            wait_for(self._cond, self._clock, lambda: request.reply is not None or not session.ready, DISARM_WAIT_S)
            return {} if request.reply is None else fields(request.reply.args)

    def _withdraw_arm(self) -> None:
        for request in self._session.queued("ARM"):
            self._session.withdraw(request)

    def _cancel_queued_fire(self) -> None:
        for request in self._session.queued("FIRE"):
            self._session.withdraw(request)
            assert request.job is not None
            self._fires.cancelled(request.job)

    # --- from the reader thread ------------------------------------------------------------------------------

    def _route(self, frame: framing.Frame) -> None:
        if frame.seq != framing.EVENT:
            with self._cond:
                self._session.reply(frame)
            return
        try:
            message = framing.parse(frame)
        except framing.Refused as refused:  # the one place a line that does not fit its declaration is refused
            log.warning("refused a line from the board: %s", refused)
            return
        handler, anytime = self._handlers[message.name]
        with self._cond:
            if anytime or self._session.ready:  # before the handshake, other news is stale
                handler(message)

    # --- the board's events, one handler each (framing.MESSAGES declares their fields), with the lock held ------

    def _on_boot(self, message: framing.Message) -> None:
        session = self._session
        if session.boot_id is not None and message.id != session.boot_id:
            session.lose(f"the board restarted (boot id {message.id}, was {session.boot_id})")

    def _on_lid(self, message: framing.Message) -> None:
        if self._session.greeted:  # current from HELLO's answer on, though CONFIG is not answered yet
            self._lid_moved(message.state == "open")

    def _on_btn(self, message: framing.Message) -> None:
        if message.fire is None:  # the board did not fire: the host decides, and the arm is gone
            self._fires.armed = None
            self._dispatch.put(self._pressed)
        elif self._fires.reflex(message.fire) is None:
            log.error("the board fired on its button (fire %s) with no arm the host knows of", message.fire)
        self._button_changed(True)

    def _on_up(self, message: framing.Message) -> None:
        self._button_changed(False)

    def _on_card(self, message: framing.Message) -> None:
        for _ in range(self._fires.card(message.n)):
            self._dispatch.put(self._card)

    def _on_done(self, message: framing.Message) -> None:
        self._fires.reflex(message.fire)  # a fire from the arm whose BTN line was lost, if it is one
        self._fires.done(message.fire, message.dispensed, message.ms, message.reason)
        if self._session.board_state == "FIRING":  # until the next heartbeat says so itself
            self._session.board_state = "IDLE"

    def _on_news(self, message: framing.Message) -> None:
        """JAM, STUCK and EMPTY: a DONE follows, which carries the reason."""

    def _lid_moved(self, is_open: bool) -> None:
        """With the lock held: the board told that the lid opened or closed."""
        if is_open:
            self._fires.armed = None  # the board drops its arm as the lid opens
        self.inputs.lid_open = is_open
        self._dispatch.put(lambda: self._lid_changed(is_open))

    def _hello(self, said: dict[str, str]) -> None:
        self.inputs.lid_open = {"open": True, "closed": False}.get(said.get("lid", ""))
        version = said.get("fw", "")
        self._firmware = int(version) if version.isdigit() else 0

    def _button_changed(self, down: bool) -> None:
        """With the lock held: the button's edge as the board told it, passed on once each way."""
        if self._firmware < RELEASE_FIRMWARE:  # it never tells the release: a press would be a hold without end
            if down and self.inputs.when_button_changed is not None and not self._told_old_firmware:
                self._told_old_firmware = True
                log.warning(
                    "the board's firmware %s does not tell when the button is let go, so holding the button does "
                    "nothing; firmware %d does (docs/FIRMWARE.md)",
                    self._firmware,
                    RELEASE_FIRMWARE,
                )
            return
        if down == self._button_down:
            return
        self._button_down = down
        self._dispatch.put(lambda: self._tell_button(down))

    def _reflexed(self, job: SerialFireJob) -> None:
        """With the lock held: the board has made a fire from its arm; the controller hears of it (and, if it asks
        first, from `disarm`)."""
        self._last_reflex = job
        self._dispatch.put(lambda: self._reflex_fired(job))

    # --- on the dispatcher thread ------------------------------------------------------------------------------

    def _pressed(self) -> None:
        callback = self.inputs.when_pressed
        if callback is not None:
            callback()

    def _reflex_fired(self, job: SerialFireJob) -> None:
        callback = self.dispenser.when_reflex
        if callback is not None:
            callback(job)

    def _card(self) -> None:
        callback = self.dispenser.when_card
        if callback is not None:
            callback()

    def _lid_changed(self, is_open: bool) -> None:
        callback = self.inputs.when_lid_changed
        if callback is not None:
            callback(is_open)

    def _tell_button(self, down: bool) -> None:
        callback = self.inputs.when_button_changed
        if callback is not None:
            callback(down)

    def _link_changed(self, ok: bool, message: str) -> None:
        if not ok:
            with self._cond:
                self._button_changed(False)  # its release will never be told
        callback = self.when_link_changed
        if callback is not None:
            self._dispatch.put(lambda: callback(ok, message))
