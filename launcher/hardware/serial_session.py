"""The conversation with the board, on the `serial-link` thread: the only writer on the wire.

Whenever the port opens: HELLO, then CONFIG with every board setting of `[dispense]`. Then one command in flight
at a time, each retransmitted unchanged up to TRIES times, and a heartbeat when nothing else was sent for
HEARTBEAT_S (the board stops its motor and latches SAFE after 1.5 s without one). A session is one port opening
and one boot id; when it ends (no reply, a write that fails, a board that restarted or went SAFE, a reply out of
step) the fire in progress fails and HELLO starts the next one.

Sequence numbers run 1..65535 and round again (0 is never sent). The board takes a line again with the same
number and text as a retransmission only when nothing else came in between, so a FIRE whose number has wrapped
round is a new fire; and the fire tracker refuses an acknowledgement that names an old fire.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import threading
from collections.abc import Callable

from launcher.clock import Clock
from launcher.config import DispenseConfig
from launcher.hardware import framing
from launcher.hardware.base import StopReason
from launcher.hardware.serial_fires import FireTracker, SerialFireJob, fields
from launcher.hardware.serial_port import REOPEN_S, PortKeeper, wait_for
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)

REPLY_TIMEOUT_S = 0.25  # per try; a healthy board answers within a few milliseconds
TRIES = 3
HEARTBEAT_S = 0.5

PER_FIRE = ("pwm", "max_run_ms")  # travel with every FIRE
HOST_ONLY = ("hopper_cards",)  # the controller's, not the board's
BOARD_SETTINGS = tuple(f.name for f in dataclasses.fields(DispenseConfig) if f.name not in PER_FIRE + HOST_ONLY)


def config_args(dispense: DispenseConfig) -> tuple[str, ...]:
    """CONFIG's arguments: every other `[dispense]` setting, by its own name, so the board runs as the Pi does."""
    return tuple(f"{name}={getattr(dispense, name)}" for name in BOARD_SETTINGS)


class Request:
    """One command, its fields by the names framing.MESSAGES declares (checked there as it is made)."""

    def __init__(self, cmd: str, job: SerialFireJob | None = None, **fields: object) -> None:
        self.cmd = cmd
        self.fields = fields
        self.args = framing.args(cmd, **fields)  # in wire order
        self.job = job  # a FIRE's
        self.seq = -1
        self.reply: framing.Frame | None = None


class Session:
    """State guarded by `cond`, which the port keeper and the fire tracker share."""

    def __init__(
        self,
        keeper: PortKeeper,
        fires: FireTracker,
        *,
        config: tuple[str, ...],
        cond: threading.Condition,
        clock: Clock,
        on_hello: Callable[[dict[str, str]], None],
        on_link: Callable[[bool, str], None],
    ) -> None:
        self._keeper = keeper
        self._fires = fires
        self._config = config
        self._cond = cond
        self._clock = clock
        self._on_hello = on_hello  # with the lock held, on the reader thread: HELLO's fields
        self._on_link = on_link  # without the lock: the link came up or went down, and why
        self.link_up: bool | None = None  # None: not known yet
        self.message = "connecting"
        self.boot_id: str | None = None
        self.board_state = "unknown"
        self.retransmits = 0
        self.restarts = 0
        self.seq = 0  # the last sequence number sent
        self._lost: str | None = None  # why the current session must end
        self.greeted = False  # the board has answered this session's HELLO: its news from then on is current
        self._queue: collections.deque[Request] = collections.deque()
        self._inflight: Request | None = None
        self._last_sent = clock.now()
        self._thread = StoppableThread(self._run, "serial-link", clock=clock, wake=self._wake)

    def start(self) -> None:
        self._thread.start()

    @property
    def closing(self) -> bool:
        return self._thread.stopping.is_set()

    # --- for the other threads, with the lock held ------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return bool(self.link_up) and self._lost is None and not self.closing

    def submit(self, request: Request, *, first: bool = False) -> None:
        self._queue.appendleft(request) if first else self._queue.append(request)
        self._cond.notify_all()

    def queued(self, cmd: str) -> list[Request]:
        return [r for r in self._queue if r.cmd == cmd]

    def withdraw(self, request: Request) -> None:
        self._queue.remove(request)

    def lose(self, why: str) -> None:
        """End the current session (the board restarted, say): the link thread greets the board again."""
        if self._lost is None:
            self._lost = why
            self._fires.fail()
            self._cond.notify_all()

    def reply(self, frame: framing.Frame) -> None:
        """A reply from the reader thread: the command in flight's, or a late copy of one already taken."""
        request = self._inflight
        if request is not None and request.seq == frame.seq and request.reply is None:
            request.reply = frame
            # Here, in the wire's order with the events: an event after the reply is news since it.
            self._fires.answered(request.cmd, request.fields, frame)
            if request.cmd == "HELLO" and frame.cmd == "OK":
                self.greeted = True
                self._on_hello(fields(frame.args))
            self._cond.notify_all()

    # --- without the lock ------------------------------------------------------------------------------------

    def close(self) -> None:
        """Send what is queued (the closing STOP), then end the session and the thread."""
        self._thread.stop()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def set_link(self, ok: bool, message: str) -> None:
        with self._cond:
            self.message = message
            if self.link_up is ok:
                return
            self.link_up = ok
        (log.info if ok else log.warning)("serial link %s: %s", "up" if ok else "down", message)
        self._on_link(ok, message)

    # --- the link thread ---------------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                wait_for(self._cond, self._clock, lambda: self.closing or self._keeper.port is not None, None)
                if self.closing:
                    return
                generation = self._keeper.generation
                self._lost = None
                self.greeted = False
            self._end(generation, self._serve(generation))

    def _serve(self, generation: int) -> str:
        """Greet the board and serve it until the session ends; returns why it ended."""
        hello = self._transact(Request("HELLO"), generation)
        if hello is None or hello.cmd != "OK":
            return self._why_lost(generation, f"no answer from a launcher board on {self._keeper.name}")
        said = fields(hello.args)
        boot = said.get("boot")
        with self._cond:
            if self.boot_id is not None and boot != self.boot_id:
                self.restarts += 1
            self.boot_id = boot
            self.board_state = said.get("state", "unknown")
            fired = said.get("fire", "")
            self._fires.session_started(int(fired) if fired.isdigit() else 0)
        configured = self._transact(Request("CONFIG", settings=self._config), generation)
        if configured is None:
            return self._why_lost(generation, f"no answer from the board on {self._keeper.name}")
        if configured.cmd != "OK":
            return f"the board refused CONFIG {' '.join(self._config)}: {' '.join(configured.args)}"
        if self.closing:
            return "closed"
        self.set_link(True, f"launcher board {boot} ready on {self._keeper.name}")
        while (request := self._next_request(generation)) is not None:
            reply = self._transact(request, generation)
            if reply is None:
                return self._why_lost(generation, f"no reply from the board after {TRIES} tries")
            self._handle_reply(request, reply)
        return self._why_lost(generation, "closed")

    def _gone(self, generation: int) -> bool:
        return self._lost is not None or self._keeper.trouble(generation) is not None

    def _why_lost(self, generation: int, default: str) -> str:
        with self._cond:
            return self._lost or self._keeper.trouble(generation) or default

    def _end(self, generation: int, why: str) -> None:
        with self._cond:
            closing = self.closing
            self._fires.fail(StopReason.ABORTED if closing else StopReason.ERROR)  # closing stops it on purpose
            self._queue.clear()  # a queued FIRE is the job that just failed
            self.board_state = "unknown"
        if closing:
            return
        self.set_link(False, why)
        with self._cond:  # a silent board is greeted again after a pause; a replugged one at once
            wait_for(self._cond, self._clock, lambda: self.closing or self._keeper.generation != generation, REOPEN_S)

    def _next_request(self, generation: int) -> Request | None:
        with self._cond:
            while not self._gone(generation):
                if self._queue:
                    return self._queue.popleft()
                if self.closing:
                    return None
                now = self._clock.now()
                give_up = self._fires.give_up_at()
                if give_up is not None and now >= give_up:
                    log.error("the board never reported the end of its fire; stopping it")
                    self._fires.fail()
                    return Request("STOP")
                beat = self._last_sent + HEARTBEAT_S
                if now >= beat:  # STATUS while a fire is out: it recovers a DONE lost on the wire
                    return Request("STATUS" if self._fires.awaiting_done else "PING")
                self._cond.wait(min(beat, give_up or beat) - now)
            return None

    def _transact(self, request: Request, generation: int) -> framing.Frame | None:
        """Send one command and wait for its reply, retransmitting the very same line. None if none came."""
        with self._cond:
            self.seq = self.seq % framing.MAX_SEQ + 1
            request.seq = self.seq
        line = framing.encode(request.seq, request.cmd, request.args)
        for attempt in range(TRIES):
            with self._cond:
                if self._gone(generation):
                    break
                self._inflight = request
                if attempt:
                    self.retransmits += 1
            if not self._keeper.write(generation, line):
                break
            with self._cond:
                self._last_sent = self._clock.now()
                wait_for(
                    self._cond,
                    self._clock,
                    lambda: request.reply is not None or self._gone(generation),
                    REPLY_TIMEOUT_S,
                )
                if request.reply is not None:
                    self._inflight = None
                    return request.reply
        with self._cond:
            self._inflight = None
        return None

    def _handle_reply(self, request: Request, reply: framing.Frame) -> None:
        said = fields(reply.args)
        with self._cond:
            if request.job is not None:
                self._fire_answered(request.job, request, reply)
            elif request.cmd == "ARM" and reply.cmd != "OK":
                log.info("the board refused ARM %s: %s", " ".join(map(str, request.args)), " ".join(reply.args))
                if reply.args == ("safe",):
                    self._lost = "the board is SAFE: it restarted or stopped hearing the host"
            elif request.cmd in ("PING", "STATUS") and reply.cmd == "OK":
                state = said.get("state", "unknown")
                self.board_state = state
                if said.get("boot") != self.boot_id:
                    self._lost = f"the board restarted (boot id {said.get('boot')})"
                elif state == "SAFE":
                    self._lost = "the board went SAFE: it stopped hearing the host"
                else:
                    self._fires.told_fires(said.get("fire", ""))  # a fire made from the arm whose BTN line was lost
                    if request.cmd == "STATUS" and state != "FIRING":
                        self._fires.recover(said.get("last", ""))

    def _fire_answered(self, job: SerialFireJob, request: Request, reply: framing.Frame) -> None:
        if reply.cmd != "OK":
            code = " ".join(reply.args)
            log.warning("the board refused FIRE %s: %s", " ".join(map(str, request.args)), code)
            self._fires.refused(job)
            if code == "safe":
                self._lost = "the board is SAFE: it restarted or stopped hearing the host"
            return
        self.board_state = "FIRING"
        out_of_step = self._fires.acknowledged(job, reply.args)
        if out_of_step is not None and self._lost is None:
            self._lost = out_of_step
