"""The launcher on a microcontroller board over USB serial: the host end of the link to `firmware/`.

Modelled on Klipper's host/MCU link, simplified to the ASCII lines of `framing` (docs/FIRMWARE.md). The board
times the motor and counts the cards; the host only asks. Three threads, each stopped by `close()`:

- the reader opens the port (exclusively, and again by the same `/dev/serial/by-id/` path after the board is
  unplugged), reads lines and routes them: a reply to the command in flight, an event to the callbacks;
- the link thread is the only writer: HELLO and CONFIG when a board appears, then one command in flight at a
  time, each retransmitted unchanged up to TRIES times, and a heartbeat when nothing else was sent for
  HEARTBEAT_S (the board stops its motor and latches SAFE after 1.5 s without one);
- the dispatcher runs `when_pressed` and `when_link_changed` in order, so a slow callback never stalls the wire.

A FIRE is never executed twice: the board answers a retransmission from memory, a board that has restarted is
SAFE until HELLO and refuses it, and the host never sends a FIRE again once its session (one port opening and
one boot id) has ended: it fails the job instead.
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from collections.abc import Callable

import serial

from launcher.hardware import framing
from launcher.hardware.base import DispenseResult, NoCues, StopReason

log = logging.getLogger(__name__)

REPLY_TIMEOUT_S = 0.25  # per try; a healthy board answers within a few milliseconds
TRIES = 3
HEARTBEAT_S = 0.5
REOPEN_S = 0.5  # between attempts to open the port or to greet a board that does not answer
READ_TIMEOUT_S = 0.05
WRITE_TIMEOUT_S = 0.5
JOB_SLACK_S = 3.0  # a fire still unreported this long after its max_run_ms is given up (and stopped)

# The board's DONE reasons. An empty hopper is a jam to the controller, which tells the two apart by its deck
# count; describe() says when the board's hopper sensor reported empty.
_REASONS = {
    "count": StopReason.COUNT,
    "timeout": StopReason.TIMEOUT,
    "jam": StopReason.JAM,
    "empty": StopReason.JAM,
    "stop": StopReason.ABORTED,
    "lid": StopReason.ABORTED,
    "safe": StopReason.ABORTED,
}

Clock = Callable[[], float]


class LinkDown(RuntimeError):
    """`start()` while no board is connected and ready."""


class SerialInputs:
    """The board's inputs as the controller sees them. Callbacks run on the link's dispatcher thread."""

    def __init__(self) -> None:
        self.when_pressed: Callable[[], None] | None = None
        self.when_lid_changed: Callable[[bool], None] | None = None  # called with True when the lid opens
        self.lid_open: bool | None = None  # None until the board has said


class SerialFireJob:
    """One FIRE. Ends with the board's DONE, or ERROR when the link or the board fails before that."""

    def __init__(self, requested: int, started: float) -> None:
        self.requested = requested
        self.started = started
        self.fire: int | None = None  # the board's number for it, once acknowledged
        self.cards = 0  # cards the board has reported so far
        self._result: DispenseResult | None = None
        self._done = threading.Event()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> DispenseResult:
        """Block until the fire has ended. TimeoutError if `timeout` seconds pass first."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"the fire of {self.requested} cards has not ended after {timeout} s")
        assert self._result is not None
        return self._result

    def _resolve(self, result: DispenseResult) -> None:
        if self._result is None:
            self._result = result
            self._done.set()


class SerialDispenser:
    """The motor on the board, through the link."""

    def __init__(self, hardware: SerialHardware) -> None:
        self._hardware = hardware

    def start(self, cards: int) -> SerialFireJob:
        """Queue a FIRE and return at once. LinkDown if no board is ready, RuntimeError if a fire is running."""
        return self._hardware._start(cards)

    def stop(self) -> None:
        """Motor off: cancel a FIRE not yet sent and send STOP. Safe from any thread; never blocks or raises."""
        self._hardware._stop_motor()


class _Request:
    def __init__(self, cmd: str, args: tuple[object, ...] = (), job: SerialFireJob | None = None) -> None:
        self.cmd = cmd
        self.args = args
        self.job = job
        self.seq = -1
        self.reply: framing.Frame | None = None


def _fields(args: tuple[str, ...]) -> dict[str, str]:
    return dict(a.split("=", 1) for a in args if "=" in a)


class SerialHardware:
    """A launcher board on a serial port (firmware/ on a Raspberry Pi Pico). Closable twice; a context manager.

    `when_link_changed(ok, message)` is called, on the dispatcher thread, whenever the link comes up or goes down:
    the board appeared or answered, or it was unplugged, stopped answering, or restarted.
    """

    def __init__(
        self,
        *,
        port: str,
        baudrate: int = 115200,
        max_run_ms: int,
        pwm: float,
        jam_ms: int,
        min_rest_ms: int = 250,
        card_gap_ms: int = 4,
        when_link_changed: Callable[[bool, str], None] | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        if not 0 < pwm <= 1:
            raise ValueError(f"pwm must be above 0 and at most 1, not {pwm}")
        for name, value in (("max_run_ms", max_run_ms), ("jam_ms", jam_ms), ("baudrate", baudrate)):
            if value < 1:
                raise ValueError(f"{name} must be positive, not {value}")
        self.port = port
        self.baudrate = baudrate
        self._max_run_ms = max_run_ms
        self._pwm_percent = max(1, min(100, round(pwm * 100)))
        self._config = (f"jam_ms={jam_ms}", f"rest_ms={min_rest_ms}", f"gap_ms={card_gap_ms}")
        self.when_link_changed = when_link_changed
        self._clock = clock
        self.inputs = SerialInputs()
        self.cues = NoCues()  # the board has no light or buzzer of ours
        self.dispenser = SerialDispenser(self)

        self._cond = threading.Condition()
        self._write_lock = threading.Lock()  # one writer at a time, and never onto a port being closed
        # Everything below is guarded by _cond.
        self._closing = False
        self._serial: serial.Serial | None = None
        self._generation = 0  # one per port opening
        self._drop_generation = -1  # the link thread asks the reader to close this opening
        self._port_error = ""
        self._session_lost: str | None = None  # why the current board session must end
        self._link_up: bool | None = None  # None: not known yet
        self._message = "connecting"
        self._boot_id: str | None = None
        self._board_state = "unknown"
        self._queue: collections.deque[_Request] = collections.deque()
        self._inflight: _Request | None = None
        self._job: SerialFireJob | None = None
        self._early_done: tuple[int, int, int, str] | None = None  # a DONE that overtook its FIRE's reply
        self._seq = 0
        self._last_sent = clock()
        self._deck_empty = False
        self._retransmits = 0
        self._restarts = 0
        self._bad_frames = 0  # from parsers of earlier port openings
        self._parser = framing.Parser()

        self._calls: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._stop_reader = threading.Event()
        self._threads = [
            threading.Thread(target=self._run_dispatch, name="serial-dispatch", daemon=True),
            threading.Thread(target=self._run_reader, name="serial-reader", daemon=True),
            threading.Thread(target=self._run_link, name="serial-link", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    # --- the backend interface ------------------------------------------------------------------------------

    def describe(self) -> dict[str, object]:
        with self._cond:
            link = {None: "connecting", True: "up", False: "down"}[self._link_up]
            return {
                "backend": "serial",
                "port": self.port,
                "link": link,
                "message": self._message,
                "boot_id": self._boot_id,
                "board_state": self._board_state,
                "hopper_empty": self._deck_empty,
                "retransmits": self._retransmits,
                "restarts": self._restarts,
                "bad_frames": self._bad_frames + self._parser.bad,
            }

    def close(self) -> None:
        """Motor off (a last STOP if the board is there), threads stopped, port closed. Safe to call twice."""
        with self._cond:
            if self._closing:
                return
            self._closing = True
            self._cancel_queued_fires()
            if self._link_up:
                self._queue.appendleft(_Request("STOP"))
            self._cond.notify_all()
        link, reader, dispatch = self._threads[2], self._threads[1], self._threads[0]
        self._join(link)
        self._stop_reader.set()
        with self._write_lock, self._cond:  # the reader closes ports under the write lock
            if self._serial is not None:
                self._serial.cancel_read()  # wakes the reader now rather than at its read timeout
        self._join(reader)
        with self._cond:
            if self._job is not None:
                self._finish_job(self._job, self._failed(self._job, StopReason.ABORTED))
        self._calls.put(None)
        self._join(dispatch)

    def __enter__(self) -> SerialHardware:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _join(thread: threading.Thread) -> None:
        if thread is not threading.current_thread():  # close() from a callback must not wait for itself
            thread.join()

    # --- dispenser ---------------------------------------------------------------------------------------------

    def _start(self, cards: int) -> SerialFireJob:
        if cards < 1:
            raise ValueError(f"cards must be at least 1, not {cards}")
        with self._cond:
            if self._closing:
                raise LinkDown("the serial link is closed")
            if not self._link_up or self._session_lost is not None:
                raise LinkDown(f"the launcher board is not ready: {self._message}")
            if self._job is not None:
                raise RuntimeError("a fire is already in progress")
            job = self._job = SerialFireJob(cards, self._clock())
            self._early_done = None
            self._queue.append(_Request("FIRE", (cards, self._max_run_ms, self._pwm_percent), job))
            self._cond.notify_all()
        return job

    def _stop_motor(self) -> None:
        with self._cond:
            self._cancel_queued_fires()
            if self._link_up and not self._closing and not any(r.cmd == "STOP" for r in self._queue):
                self._queue.appendleft(_Request("STOP"))
                self._cond.notify_all()

    def _cancel_queued_fires(self) -> None:
        for request in [r for r in self._queue if r.cmd == "FIRE"]:
            self._queue.remove(request)
            assert request.job is not None
            self._finish_job(request.job, DispenseResult(request.job.requested, 0, 0, StopReason.ABORTED))

    def _finish_job(self, job: SerialFireJob, result: DispenseResult) -> None:
        job._resolve(result)
        if self._job is job:
            self._job = None
            self._early_done = None

    def _failed(self, job: SerialFireJob, reason: StopReason = StopReason.ERROR) -> DispenseResult:
        ms = round((self._clock() - job.started) * 1000)
        return DispenseResult(job.requested, job.cards, ms, reason)

    # --- link thread: handshake, one command in flight, heartbeat ---------------------------------------------

    def _run_link(self) -> None:
        while True:
            with self._cond:
                while not self._closing and self._serial is None:
                    self._cond.wait()
                if self._closing:
                    return
                generation = self._generation
                self._session_lost = None
            reason = self._session(generation)
            self._end_session(generation, reason)

    def _session(self, generation: int) -> str:
        """Greet the board and serve it until the session ends; returns why it ended."""
        hello = self._transact(_Request("HELLO"), generation)
        if hello is None or hello.cmd != "OK":
            return self._why_lost(f"no answer from a launcher board on {self.port}")
        fields = _fields(hello.args)
        boot = fields.get("boot")
        with self._cond:
            if self._boot_id is not None and boot != self._boot_id:
                self._restarts += 1
            self._boot_id = boot
            self._board_state = fields.get("state", "unknown")
            self.inputs.lid_open = {"open": True, "closed": False}.get(fields.get("lid", ""))
        configured = self._transact(_Request("CONFIG", self._config), generation)
        if configured is None:
            return self._why_lost(f"no answer from the board on {self.port}")
        if configured.cmd != "OK":
            return f"the board refused CONFIG {' '.join(self._config)}: {' '.join(configured.args)}"
        if self._closing:
            return "closed"
        self._set_link(True, f"launcher board {boot} ready on {self.port}")
        while (request := self._next_request(generation)) is not None:
            reply = self._transact(request, generation)
            if reply is None:
                return self._why_lost(f"no reply from the board after {TRIES} tries")
            self._handle_reply(request, reply)
        return self._why_lost("closed")

    def _why_lost(self, default: str) -> str:
        with self._cond:
            if self._session_lost is not None:
                return self._session_lost
            if self._serial is None and self._port_error:
                return self._port_error
            return default

    def _end_session(self, generation: int, reason: str) -> None:
        with self._cond:
            closing = self._closing
            if self._job is not None:  # closing stops the fire on purpose; anything else is a failure
                stop = StopReason.ABORTED if closing else StopReason.ERROR
                self._finish_job(self._job, self._failed(self._job, stop))
            self._cancel_queued_fires()
            self._queue.clear()
            self._board_state = "unknown"
        if not closing:
            self._set_link(False, reason)
            with self._cond:  # a silent board is greeted again after a pause; a replugged one at once
                self._cond.wait_for(lambda: self._closing or self._generation != generation, REOPEN_S)

    def _lost(self, generation: int) -> bool:
        return self._generation != generation or self._serial is None or self._session_lost is not None

    def _next_request(self, generation: int) -> _Request | None:
        with self._cond:
            while not self._lost(generation):
                if self._queue:
                    return self._queue.popleft()
                if self._closing:
                    return None
                job = self._job
                if job is not None and self._clock() > job.started + self._max_run_ms / 1000 + JOB_SLACK_S:
                    log.error("the board never reported the end of fire %s; stopping it", job.fire)
                    self._finish_job(job, self._failed(job))
                    return _Request("STOP")
                left = self._last_sent + HEARTBEAT_S - self._clock()
                if left <= 0:  # STATUS while a fire is out: it recovers a DONE lost on the wire
                    return _Request("STATUS" if job is not None and job.fire is not None else "PING")
                self._cond.wait(left)
            return None

    def _transact(self, request: _Request, generation: int) -> framing.Frame | None:
        """Send one command and wait for its reply, retransmitting the very same line. None if none came."""
        with self._cond:
            self._seq = self._seq % framing.MAX_SEQ + 1
            request.seq = self._seq
        line = framing.encode(request.seq, request.cmd, request.args)
        for attempt in range(TRIES):
            with self._cond:
                if self._lost(generation):
                    break
                self._inflight = request
                if attempt:
                    self._retransmits += 1
            if not self._write(generation, line):
                break
            deadline = self._clock() + REPLY_TIMEOUT_S
            with self._cond:
                while request.reply is None and not self._lost(generation):
                    left = deadline - self._clock()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                if request.reply is not None:
                    self._inflight = None
                    return request.reply
        with self._cond:
            self._inflight = None
        return None

    def _write(self, generation: int, line: bytes) -> bool:
        with self._write_lock:
            with self._cond:
                port = self._serial if self._generation == generation else None
            if port is None:
                return False
            try:
                port.write(line)
            except (OSError, ValueError, TypeError) as e:
                with self._cond:  # a port that takes no writes is as good as gone: the reader reopens it
                    self._session_lost = f"cannot write to {self.port}: {e}"
                    self._drop_generation = generation
                port.cancel_read()
                return False
            with self._cond:
                self._last_sent = self._clock()
            return True

    def _handle_reply(self, request: _Request, reply: framing.Frame) -> None:
        fields = _fields(reply.args)
        with self._cond:
            if request.cmd == "FIRE":
                self._fire_acknowledged(request, reply, fields)
            elif request.cmd in ("PING", "STATUS") and reply.cmd == "OK":
                state = fields.get("state", "unknown")
                self._board_state = state
                if fields.get("boot") != self._boot_id:
                    self._session_lost = f"the board restarted (boot id {fields.get('boot')})"
                elif state == "SAFE":
                    self._session_lost = "the board went SAFE: it stopped hearing the host"
                elif request.cmd == "STATUS" and state != "FIRING":
                    self._recover_done(fields.get("last", ""))

    def _fire_acknowledged(self, request: _Request, reply: framing.Frame, fields: dict[str, str]) -> None:
        job = request.job
        assert job is not None
        if reply.cmd != "OK":
            code = " ".join(reply.args)
            log.warning("the board refused FIRE %s: %s", " ".join(map(str, request.args)), code)
            self._finish_job(job, DispenseResult(job.requested, 0, 0, StopReason.ERROR))
            if code == "safe":
                self._session_lost = "the board is SAFE: it restarted or stopped hearing the host"
            return
        self._board_state = "FIRING"
        fire = fields.get("fire", "")
        job.fire = int(fire) if fire.isdigit() else None
        early = self._early_done
        if early is not None and early[0] == job.fire:
            self._done(job, *early[1:])

    def _recover_done(self, last: str) -> None:
        job = self._job
        parts = last.split(":")
        if job is None or job.fire is None or len(parts) != 4 or not all(p.isdigit() for p in parts[:3]):
            return
        if int(parts[0]) == job.fire:
            log.info("fire %s: DONE was lost on the wire; recovered from STATUS", job.fire)
            self._done(job, int(parts[1]), int(parts[2]), parts[3])

    def _done(self, job: SerialFireJob, dispensed: int, ms: int, reason: str) -> None:
        if reason == "empty":
            self._deck_empty = True
        if self._board_state == "FIRING":
            self._board_state = "IDLE"
        self._finish_job(job, DispenseResult(job.requested, dispensed, ms, _REASONS.get(reason, StopReason.ERROR)))

    # --- reader thread ---------------------------------------------------------------------------------------

    def _run_reader(self) -> None:
        port: serial.Serial | None = None
        try:
            while not self._stop_reader.is_set():
                if port is None:
                    port = self._open()
                    continue
                try:
                    with self._cond:
                        dropped = self._drop_generation == self._generation
                    if dropped:
                        raise serial.SerialException(self._session_lost or "dropped")
                    data = port.read(port.in_waiting or 1)
                except (OSError, ValueError, TypeError) as e:
                    self._close_port(port, f"lost the board on {self.port}: {e}")
                    port = None
                    continue
                for frame in self._parser.feed(data):
                    self._route(frame)
        finally:
            if port is not None:
                self._close_port(port, "closed")

    def _open(self) -> serial.Serial | None:
        try:
            port = serial.Serial(
                self.port,
                self.baudrate,
                timeout=READ_TIMEOUT_S,
                write_timeout=WRITE_TIMEOUT_S,
                exclusive=True,  # a second daemon, or a terminal left open, must not share the board
            )
        except (OSError, ValueError) as e:
            self._set_link(False, f"cannot open {self.port}: {e}")
            self._stop_reader.wait(REOPEN_S)
            return None
        try:
            port.reset_input_buffer()  # presses and events from before this host was listening are stale
            port.write(b"\n")  # ends any half line the board's parser holds
        except (OSError, ValueError) as e:
            port.close()
            self._set_link(False, f"cannot use {self.port}: {e}")
            self._stop_reader.wait(REOPEN_S)
            return None
        with self._cond:
            self._bad_frames += self._parser.bad
            self._parser = framing.Parser()
            self._serial = port
            self._generation += 1
            self._port_error = ""
            self._cond.notify_all()
        return port

    def _close_port(self, port: serial.Serial, reason: str) -> None:
        with self._write_lock:
            port.close()
        with self._cond:
            if self._serial is port:
                self._serial = None
                self._port_error = reason
                self._cond.notify_all()

    def _route(self, frame: framing.Frame) -> None:
        if frame.seq != framing.EVENT:
            with self._cond:
                request = self._inflight
                if request is not None and request.seq == frame.seq and request.reply is None:
                    request.reply = frame
                    self._cond.notify_all()
            return  # else a late copy of a reply already taken
        try:
            self._event(frame.cmd, frame.args)
        except (ValueError, IndexError):
            log.warning("malformed event from the board: %r", frame)

    def _event(self, name: str, args: tuple[str, ...]) -> None:
        with self._cond:
            if name == "BOOT":
                if self._boot_id is not None and args[0] != self._boot_id and self._session_lost is None:
                    self._session_lost = f"the board restarted (boot id {args[0]}, was {self._boot_id})"
                    if self._job is not None:
                        self._finish_job(self._job, self._failed(self._job))
                    self._cond.notify_all()
                return
            if not self._link_up or self._session_lost is not None:
                return  # from before the handshake: stale
            job = self._job
            if name == "BTN":
                self._calls.put(self._pressed)
            elif name == "CARD" and job is not None:
                job.cards = int(args[0])
            elif name == "DONE" and job is not None:
                dispensed, ms, reason, fire = int(args[0]), int(args[1]), args[2], int(args[3])
                if job.fire is None:
                    self._early_done = (fire, dispensed, ms, reason)
                elif job.fire == fire:
                    self._done(job, dispensed, ms, reason)
            elif name == "LID":
                self.inputs.lid_open = args[0] == "open"
                self._calls.put(lambda: self._lid_changed(args[0] == "open"))
            # JAM and EMPTY are followed by DONE, which carries the reason.

    # --- dispatcher thread -----------------------------------------------------------------------------------

    def _run_dispatch(self) -> None:
        while (call := self._calls.get()) is not None:
            try:
                call()
            except Exception:
                log.exception("a serial link callback failed")

    def _pressed(self) -> None:
        callback = self.inputs.when_pressed
        if callback is not None:
            callback()

    def _lid_changed(self, is_open: bool) -> None:
        callback = self.inputs.when_lid_changed
        if callback is not None:
            callback(is_open)

    def _set_link(self, ok: bool, message: str) -> None:
        with self._cond:
            self._message = message
            if self._link_up is ok:
                return
            self._link_up = ok
        (log.info if ok else log.warning)("serial link %s: %s", "up" if ok else "down", message)
        callback = self.when_link_changed
        if callback is not None:
            self._calls.put(lambda: callback(ok, message))
