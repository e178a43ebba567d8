"""UNO Attack launcher firmware: MicroPython on a Raspberry Pi Pico, driven by the host over USB serial.

The board times the motor and counts the cards itself, so the motor stays bounded whatever happens to the host
or to the cable:
- a FIRE never runs the motor longer than its max_ms, itself capped by board.MAX_RUN_MS;
- soft start from a third of the duty up to the duty over ramp_ms;
- no card at the exit for jam_ms: reverse for reverse_ms, retry once, then E JAM (E EMPTY when the hopper sensor
  says so); a card blocking the beam for stuck_ms: E STUCK;
- after the count, a jam or a stuck card, a reverse pulse of reverse_ms pulls back a card left sticking out;
- lid open: motor off; host silent for SILENCE_MS: motor off and SAFE latched until the next HELLO;
- a board that has just booted is SAFE as well, so a FIRE retransmitted to a board that reset is refused;
- a retransmitted command (same seq, same text, straight after the first copy) gets the same reply again and is
  not executed again; any other line in between makes it a new command;
- the reflex: ARM holds the next press's fire, which the board starts itself in the pass of its loop that sees the
  press, whatever the host is doing; an ARM of 0 cards holds a press that fires nothing here (a miss: the host is
  told of the press, the motor stays off), so that a miss is armed as a fire is; HELLO, STOP, FIRE, DISARM, the
  lid, host silence and any press drop it;
- each press (E BTN) is followed by E UP once the button has rested released for debounce_ms, so the host can
  tell a hold from a press;
- machine.WDT resets a stalled loop, and a board in reset holds the motor off (pull-downs on IN1/IN2).

The logic is the class Launcher, which is handed the `machine` module, a clock with MicroPython's ticks
functions and a write function, so the tests run it under CPython with a fake machine. `run()` at the bottom is
the loop on the board. Protocol and wiring: docs/FIRMWARE.md.
"""

import board
import framing

VERSION = "5"  # 3: ARM and DISARM, the board's reflex; 4: E UP, the button let go; 5: ARM of 0 cards
SILENCE_MS = 1500  # the host sends something every ~500 ms
LID_SETTLE_MS = 20
MAX_CARDS = 99
FULL_DUTY = 65535

IDLE = "IDLE"
FIRING = "FIRING"
SAFE = "SAFE"

_RUN = 0
_RETRY_REVERSE = 1  # no card came: back off the roller once, then try again
_PULLBACK = 2  # the fire is over: a short reverse pulls back a card left sticking out, then DONE
_PULL_BACK_AFTER = ("count", "jam", "stuck", "empty")  # not after a timeout, the lid, a STOP or silence

# CONFIG settings: name -> (default, lowest, highest), all in milliseconds. The names, defaults and ranges are
# those of the host's [dispense] section, so a board that was never configured behaves as the Pi's own pins do.
SETTINGS = {
    "jam_ms": (1200, 50, 10000),  # motor on and no card at the exit for this long: a jam
    "card_gap_ms": (4, 0, 500),  # beam edges closer than this are the same card
    "stuck_ms": (400, 20, 10000),  # the beam blocked this long: a card stuck at the exit
    "reverse_ms": (40, 0, 500),  # the pull-back pulse, and the reverse before the jam retry (0: neither)
    "min_rest_ms": (250, 0, 10000),  # motor rest between two fires
    "ramp_ms": (80, 0, 2000),  # soft start from a third of the duty
    "debounce_ms": (30, 0, 500),  # the button must rest released this long before a press counts
}
_SETTING_NAMES = ("jam_ms", "card_gap_ms", "stuck_ms", "reverse_ms", "min_rest_ms", "ramp_ms", "debounce_ms")
_ANSWER_FRESH = ("HELLO", "PING", "STATUS")  # change nothing worth remembering: a repeat is answered anew


class Launcher:
    """The board's whole behaviour. Call `receive(bytes)` with what the host sent and `poll()` every ~1 ms."""

    def __init__(self, machine, clock, write, boot_id, wdt=None, pins=board):
        self._clock = clock
        self._write = write
        self._wdt = wdt
        self.boot_id = boot_id
        self.settings = {}
        for name in _SETTING_NAMES:
            self.settings[name] = SETTINGS[name][0]
        self._max_run_ms = pins.MAX_RUN_MS

        Pin = machine.Pin
        self._in1 = machine.PWM(Pin(pins.MOTOR_IN1, Pin.OUT))
        self._in2 = machine.PWM(Pin(pins.MOTOR_IN2, Pin.OUT))
        for pwm in (self._in1, self._in2):
            pwm.freq(pins.PWM_FREQ)
            pwm.duty_u16(0)
        self._forward_duty = 0
        self._reverse_duty = 0
        self._led = None if pins.LED is None else Pin(pins.LED, Pin.OUT)
        self._button = Pin(pins.BUTTON, Pin.IN, Pin.PULL_UP)
        self._beam = Pin(pins.BEAM, Pin.IN, Pin.PULL_UP)
        self._lid = None if pins.LID is None else Pin(pins.LID, Pin.IN, Pin.PULL_UP)
        self._hopper = None if pins.HOPPER is None else Pin(pins.HOPPER, Pin.IN, Pin.PULL_UP)

        now = clock.ticks_ms()
        self._parser = framing.Parser()
        self.state = SAFE  # armed only by the host's HELLO
        self.fires = 0
        self.cards_total = 0
        self.replays = 0
        self._last_done = (0, 0, 0, "none")  # fire, dispensed, ms, reason
        self._remembered = None  # ((seq, cmd, args), reply) of the last command that changed something
        self._heard_ms = now
        self._stopped_ms = None  # when the motor last stopped, for min_rest_ms
        self._arm = None  # (cards, max_ms, pwm) of the fire the next press starts; None: the host decides

        # Written by the interrupt handlers, read by poll().
        self._btn_armed = self._button.value() == 1
        self._btn_low_ms = now
        self._presses = 0
        self._press_ms = now
        self._presses_sent = 0
        self._counting = False
        self._count = 0
        self._card_ms = now
        self._lid_edge_ms = now
        self.lid_open = self._lid is not None and self._lid.value() == 1

        # The fire in progress.
        self._phase = _RUN
        self._phase_ms = now
        self._fire_start = now
        self._fire_max_ms = 0
        self._target = 0
        self._duty = 0
        self._cards_sent = 0
        self._progress_ms = now
        self._blocked_ms = None
        self._retried = False
        self._outcome = ("none", 0)  # reason and ms of a fire that has stopped counting (its pull-back runs)

        # The host's commands (framing.MESSAGES declares their fields): name -> handler(message) -> reply tokens.
        self._handlers = {
            "HELLO": self._hello,
            "PING": self._ping,
            "STATUS": self._status_full,
            "FIRE": self._fire,
            "ARM": self._arm_fire,
            "DISARM": self._disarm,
            "STOP": self._stop_fire,
            "CONFIG": self._configure,
        }
        self._button.irq(self._on_button, Pin.IRQ_FALLING)
        self._beam.irq(self._on_beam, Pin.IRQ_FALLING)
        if self._lid is not None:
            self._lid.irq(self._on_lid, Pin.IRQ_FALLING | Pin.IRQ_RISING)
        self._event("BOOT", id=boot_id)

    # --- interrupt handlers: timestamps and counters, and the roller's stop at the last card ----------------

    def _on_button(self, pin):
        if self._btn_armed:  # the first edge is the press; the bounce after it is not
            self._btn_armed = False
            self._press_ms = self._btn_low_ms = self._clock.ticks_ms()
            self._presses += 1

    def _on_beam(self, pin):
        now = self._clock.ticks_ms()
        if self._counting and (
            self._count == 0 or self._clock.ticks_diff(now, self._card_ms) >= self.settings["card_gap_ms"]
        ):
            self._count += 1
            self._card_ms = now
            if self._count >= self._target:
                self._in1.duty_u16(0)  # the last card is out: the roller stops now, not at the loop's next pass

    def _on_lid(self, pin):
        self._lid_edge_ms = self._clock.ticks_ms()

    # --- the host's side ------------------------------------------------------------------------------------

    def receive(self, data):
        for frame in self._parser.feed(data):
            if frame.seq == framing.EVENT or frame.cmd in ("OK", "ERR"):
                continue  # not a command: an echo of our own output on a misconfigured port
            self._heard_ms = self._clock.ticks_ms()
            self._answer(frame)

    def _answer(self, frame):
        key = (frame.seq, frame.cmd, frame.args)
        remembered = self._remembered
        # The host retransmits a line only before it sends anything else: once another line has come, the memory
        # is stale, and the same line again (its sequence number wrapped round) is a new command.
        self._remembered = None
        if frame.cmd in _ANSWER_FRESH:
            reply = self._execute(frame)
        elif remembered is not None and remembered[0] == key:
            reply = remembered[1]  # a retransmission: its reply got lost, the command did not
            self._remembered = remembered
            self.replays += 1
        else:
            reply = self._execute(frame)
            self._remembered = (key, reply)
        self._write(framing.encode(frame.seq, reply[0], reply[1:]))

    def _execute(self, frame):
        handler = self._handlers.get(frame.cmd)
        if handler is None:
            return ["ERR", "cmd"]
        if frame.cmd == "FIRE":
            self._arm = None  # the host fires itself, whatever the reply: a press must not fire a second time
        try:
            message = framing.parse(frame)
        except framing.Refused:
            return ["ERR", "args"]
        return handler(message)

    def _hello(self, message):
        self._arm = None  # a new host session decides its presses afresh
        if self.state == FIRING:
            self._finish("stop")  # a new host session: whatever the old one started ends here
        self.state = IDLE
        tokens = self._status(True)
        tokens.append("fw=" + VERSION)
        return tokens

    def _ping(self, message):
        return self._status(False)

    def _status_full(self, message):
        return self._status(True)

    def _disarm(self, message):
        self._arm = None
        return ["OK", f"fire={self.fires}"]

    def _stop_fire(self, message):
        self._arm = None
        if self.state == FIRING:
            self._finish("stop")
        return ["OK"]

    def _status(self, full):
        tokens = ["OK", "boot=" + self.boot_id, "state=" + self.state, f"fire={self.fires}"]
        if full:
            lid = "none" if self._lid is None else "open" if self.lid_open else "closed"
            tokens.append("last={}:{}:{}:{}".format(*self._last_done))
            tokens.append("lid=" + lid)
            tokens.append("beam=" + ("blocked" if self._beam.value() == 0 else "clear"))
            tokens.append("hopper=" + ("none" if self._hopper is None else "empty" if self._empty() else "ok"))
            tokens.append(f"cards={self.cards_total}")
            tokens.append(f"bad={self._parser.bad}")
            tokens.append(f"replays={self.replays}")
            tokens.append("armed=" + ("none" if self._arm is None else str(self._arm[0])))
        return tokens

    def _configure(self, message):
        changes = {}
        for arg in message.settings:
            i = arg.find("=")
            name = arg[:i]
            value = framing.number(arg[i + 1 :])
            if i <= 0 or value is None:
                return ["ERR", "args"]
            if name not in SETTINGS:
                return ["ERR", "key"]
            if not SETTINGS[name][1] <= value <= SETTINGS[name][2]:
                return ["ERR", "range"]
            changes[name] = value
        for name in changes:  # all or nothing
            self.settings[name] = changes[name]
        tokens = ["OK"]
        for name in _SETTING_NAMES:
            tokens.append(f"{name}={self.settings[name]}")
        return tokens

    def _fire_args(self, message, least=1):
        """FIRE's and ARM's checks: (cards, max_ms, pwm), or the error reply; `least`: the fewest cards."""
        cards = message.cards
        max_ms = message.max_ms
        pwm = message.pwm
        if not (least <= cards <= MAX_CARDS and 1 <= max_ms <= self._max_run_ms and 1 <= pwm <= 100):
            return ["ERR", "range"]
        if self.state == SAFE:
            return ["ERR", "safe"]
        if self.state == FIRING:
            return ["ERR", "busy"]
        if self.lid_open:
            return ["ERR", "lid"]
        return (cards, max_ms, pwm)

    def _fire(self, message):
        checked = self._fire_args(message)
        if isinstance(checked, list):
            return checked
        now = self._clock.ticks_ms()
        if self._resting(now):
            return ["ERR", "rest"]
        self._start(checked, now)
        return ["OK", f"fire={self.fires}"]

    def _arm_fire(self, message):
        checked = self._fire_args(message, 0)  # 0 cards: the press is a miss, armed as a fire is
        if isinstance(checked, list):
            return checked
        self._arm = checked  # no rest check: the press comes later, and is checked then
        return ["OK", f"fire={self.fires}"]

    def _resting(self, now):
        rest_ms = self.settings["min_rest_ms"]
        return self._stopped_ms is not None and self._clock.ticks_diff(now, self._stopped_ms) < rest_ms

    def _start(self, fire, now):
        """Motor on for a fire of (cards, max_ms, pwm), from FIRE or from the arm at a press."""
        cards, max_ms, pwm = fire
        self.fires += 1
        self.state = FIRING
        self._target = cards
        self._fire_max_ms = max_ms
        self._duty = pwm * FULL_DUTY // 100
        self._fire_start = now
        self._count = 0
        self._cards_sent = 0
        self._blocked_ms = None
        self._retried = False
        self._run_forward(now)

    # --- the loop ---------------------------------------------------------------------------------------

    def poll(self):
        if self._wdt is not None:
            self._wdt.feed()
        now = self._clock.ticks_ms()
        if self.state != SAFE and self._clock.ticks_diff(now, self._heard_ms) >= SILENCE_MS:
            if self.state == FIRING:
                self._finish("safe")
            self.state = SAFE  # latched: only HELLO arms the board again
            self._arm = None
        # The lid before the button, so a press in the pass the lid opens does not blip the motor; the button
        # before the fire, so a fire from the arm runs from the pass that sees its press.
        self._poll_lid(now)
        self._poll_button(now)
        if self.state == FIRING:
            self._poll_fire(now)
        if self._led is not None:
            self._led.value(self.state != SAFE)  # linked to a host: never what an ARM holds

    def _poll_button(self, now):
        while self._presses_sent != self._presses:
            self._presses_sent += 1
            arm = self._arm
            self._arm = None  # any press uses the arm up, fired or not: the host decides the ones it did not fire
            if arm is not None and arm[0] and self.state == IDLE and not self.lid_open and not self._resting(now):
                self._start(arm, now)  # motor first, then the word: the reflex waits for nothing
                self._event("BTN", ms=self._press_ms, fire=self.fires)
            else:
                self._event("BTN", ms=self._press_ms)
        if self._button.value() == 0:
            self._btn_low_ms = now
        elif not self._btn_armed and self._clock.ticks_diff(now, self._btn_low_ms) >= self.settings["debounce_ms"]:
            self._btn_armed = True
            self._event("UP", ms=self._btn_low_ms)  # let go for good: the host times a hold from BTN to here

    def _poll_lid(self, now):
        if self._lid is None:
            return
        is_open = self._lid.value() == 1
        if is_open != self.lid_open and self._clock.ticks_diff(now, self._lid_edge_ms) >= LID_SETTLE_MS:
            self.lid_open = is_open
            if is_open:
                self._arm = None
            if is_open and self.state == FIRING:
                self._finish("lid")
            self._event("LID", state="open" if is_open else "closed")

    def _poll_fire(self, now):
        elapsed = self._clock.ticks_diff(now, self._fire_start)
        if self._phase == _PULLBACK:
            reversed_ms = self._clock.ticks_diff(now, self._phase_ms)
            if elapsed >= self._fire_max_ms or reversed_ms >= self.settings["reverse_ms"]:
                self._done()
            return
        self._report_cards()
        if self._count >= self._target:
            self._stop("count", now)
            return
        if elapsed >= self._fire_max_ms:
            self._stop("timeout", now)
            return
        if self._phase == _RETRY_REVERSE:
            if self._clock.ticks_diff(now, self._phase_ms) >= self.settings["reverse_ms"]:
                self._run_forward(now)
            return
        if self._beam.value() == 0:
            if self._blocked_ms is None:
                self._blocked_ms = now
            elif self._clock.ticks_diff(now, self._blocked_ms) >= self.settings["stuck_ms"]:
                self._event("STUCK")
                self._stop("stuck", now)
                return
        else:
            self._blocked_ms = None
        if self._clock.ticks_diff(now, self._progress_ms) >= self.settings["jam_ms"]:
            if self._empty():
                self._event("EMPTY")
                self._stop("empty", now)
            elif not self._retried and self.settings["reverse_ms"]:
                self._retried = True
                self._counting = False
                self._phase = _RETRY_REVERSE
                self._phase_ms = now
                self._drive(0, self._duty)
            else:
                self._event("JAM")
                self._stop("jam", now)
            return
        ramp = self.settings["ramp_ms"]
        t = self._clock.ticks_diff(now, self._phase_ms)
        if t < ramp:
            third = self._duty // 3
            self._drive(third + (self._duty - third) * t // ramp, 0)
        else:
            self._drive(self._duty, 0)

    def _run_forward(self, now):
        self._phase = _RUN
        self._phase_ms = now
        self._progress_ms = now
        self._counting = True
        self._drive(self._duty // 3 if self.settings["ramp_ms"] else self._duty, 0)

    def _report_cards(self):
        count = self._count
        while self._cards_sent < count:
            self._cards_sent += 1
            self._progress_ms = self._card_ms
            self._event("CARD", n=self._cards_sent)

    def _stop(self, reason, now):
        """The fire stops counting: note how it ended, pull back a card left sticking out, then report it."""
        self._counting = False
        self._report_cards()
        elapsed = self._clock.ticks_diff(now, self._fire_start)
        self._outcome = (reason, elapsed)
        if reason in _PULL_BACK_AFTER and self.settings["reverse_ms"] and elapsed < self._fire_max_ms:
            self._phase = _PULLBACK
            self._phase_ms = now
            self._drive(0, self._duty)
        else:
            self._done()

    def _finish(self, reason):
        """Ended from outside (STOP, HELLO, the lid, host silence): motor off now. A fire already pulling back
        keeps the outcome it had."""
        if self._phase != _PULLBACK:
            now = self._clock.ticks_ms()
            self._counting = False
            self._report_cards()
            self._outcome = (reason, self._clock.ticks_diff(now, self._fire_start))
        self._done()

    def _done(self):
        self._drive(0, 0)
        reason, ms = self._outcome
        self.cards_total += self._cards_sent
        self._last_done = (self.fires, self._cards_sent, ms, reason)
        self._stopped_ms = self._clock.ticks_ms()
        self.state = IDLE
        self._event("DONE", dispensed=self._cards_sent, ms=ms, reason=reason, fire=self.fires)

    def _empty(self):
        return self._hopper is not None and self._hopper.value() == 1

    def _drive(self, forward, reverse):
        # Off before on, so the bridge never sees both inputs driven by a stale duty.
        if forward != self._forward_duty and forward == 0:
            self._in1.duty_u16(0)
        if reverse != self._reverse_duty:
            self._in2.duty_u16(reverse)
        if forward != self._forward_duty and forward != 0:
            self._in1.duty_u16(forward)
            if self._counting and self._count >= self._target:
                self._in1.duty_u16(0)  # the last card left as the duty was written: the beam's stop stands
        self._forward_duty = forward
        self._reverse_duty = reverse

    def _event(self, name, **fields):
        self._write(framing.event(name, **fields))


def run():
    """The board's main loop. Hold the big button while plugging in to skip it and keep the REPL."""
    import random
    import select
    import sys
    import time

    import machine
    import micropython

    if machine.Pin(board.BUTTON, machine.Pin.IN, machine.Pin.PULL_UP).value() == 0:
        print("launcher: button held at boot; firmware not started, the REPL is yours")
        return
    micropython.kbd_intr(-1)  # a 0x03 byte on the link must not break into the REPL
    wdt = machine.WDT(timeout=board.WDT_MS)
    launcher = Launcher(machine, time, sys.stdout.buffer.write, f"{random.getrandbits(32):08X}", wdt=wdt)
    stdin = sys.stdin.buffer
    poller = select.poll()
    poller.register(sys.stdin, select.POLLIN)
    while True:
        if poller.poll(1):  # wakes at the first byte, or after 1 ms
            data = bytearray()
            while len(data) < 64 and poller.poll(0):
                data += stdin.read(1)
            launcher.receive(data)
        launcher.poll()


if __name__ == "__main__":
    run()
