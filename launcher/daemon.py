"""The daemon: builds every part from the config (in the order launcher/daemon_parts.py declares them), serves the
page, and shuts down with the motor off.

One process: the hardware backend, the controller, the event bus with its SQLite writer, and waitress serving
the Flask app in-process. SIGTERM and SIGINT stop the motor first, end the live streams, then close the rest.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from waitress import wasyncore
from waitress.server import BaseWSGIServer, MultiSocketServer

from launcher.access.book import AccessBook, NewPins, PinGuard
from launcher.access.budgets import Budgets
from launcher.access.connections import guarded_server
from launcher.access.doorbell import Doorbell
from launcher.access.doorbell_hold import HoldToLetIn
from launcher.clock import REAL_CLOCK, Clock
from launcher.config import Config
from launcher.daemon_parts import PARTS
from launcher.daemon_parts import StartupError as StartupError  # where the command line catches it
from launcher.events import EventBus, EventType
from launcher.fairplay.schedule import MAX_PAUSE_MS, Profile
from launcher.fairplay.shuffles import ShuffleBook
from launcher.hardware.base import Hardware
from launcher.home.moments import MomentTeller
from launcher.home.mqtt import MqttBridge
from launcher.home.mqtt_link import MqttLink
from launcher.home.tournament import TournamentBook
from launcher.press.aiming import SeatAimer
from launcher.press.controller import Controller
from launcher.press.wear import Wear
from launcher.store import Store, WriteBehind
from launcher.system import sdnotify
from launcher.system.netinfo import public_urls
from launcher.system.power import PowerMonitor
from launcher.system.poweroff import HoldToPowerOff, simulated_power_off, system_power_off
from launcher.system.statelock import StateLock
from launcher.table.games import GameDesk
from launcher.table.history import History
from webui import MAX_BODY_BYTES, create_app

log = logging.getLogger(__name__)


OUTBUF_HIGH_WATERMARK = 256 * 1024  # bytes kept per connection; also where a slow phone's stream waits for it
# A phone that drops off the Wi-Fi sends nothing, not even a reset: without these, its event stream would hold a
# thread until TCP gave up, many minutes later. Unacknowledged data (a heartbeat) for 30 s, or an idle connection
# silent to 3 probes after 10 s, and the kernel drops it; the phone's page reconnects with Last-Event-ID.
# Set on the listening socket: Linux gives them to every connection it accepts.
DEAD_PHONE_MS = 30_000
CONNECTION_OPTIONS = [
    (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1),
    (socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 10),
    (socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 5),
    (socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 3),
    (socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, DEAD_PHONE_MS),
]
CONNECTION_LIMIT = 768
CHANNEL_TIMEOUT_S = 30
WATCHDOG_SLACK_S = 5.0  # beyond the longest pause, fire and rest, before the controller's worker counts as stuck


def build_hardware(config: Config, *, clock: Clock = REAL_CLOCK) -> Hardware:
    if config.hardware.backend == "sim":
        from launcher.hardware.sim import SimulatedHardware

        return SimulatedHardware(config, clock=clock)
    if config.hardware.backend == "gpio":
        from gpiozero.pins.mock import MockFactory

        from launcher.hardware.factories import NoPinFactory, pin_factory
        from launcher.hardware.header_link import HeaderHardware

        try:
            factory = pin_factory()
        except NoPinFactory as e:
            raise StartupError(str(e)) from None
        # Mock pins (GPIOZERO_PIN_FACTORY=mock) bring their edges on whichever thread drives them: none to raise.
        real_pins = not isinstance(factory, MockFactory)
        return HeaderHardware(
            pins=config.pins,
            dispense=config.dispense,
            pin_factory=factory,
            clock=clock,
            seat_angles=config.aim.seat_angles,
            edge_priority=config.hardware.edge_priority if real_pins else 0,
        )
    from launcher.hardware.serial_link import SerialHardware

    return SerialHardware(
        port=config.serial.port, baudrate=config.serial.baudrate, dispense=config.dispense, clock=clock
    )


class Daemon:
    """Every part, built in the order launcher/daemon_parts.py declares them; serving, and the shutdown."""

    config: Config
    clock: Clock
    sysfs: Path
    make_hardware: Callable[[], Hardware]  # a test's hardware, else the config's backend
    store: Store
    _state_lock: StateLock
    writes: WriteBehind
    bus: EventBus
    hardware: Hardware
    profiles: dict[str, Profile]
    access: AccessBook
    new_pins: NewPins | None
    shuffles: ShuffleBook
    aimer: SeatAimer | None
    history: History
    games: GameDesk
    wear: Wear
    controller: Controller
    tournaments: TournamentBook
    budgets: Budgets
    mqtt_link: MqttLink | None
    mqtt: MqttBridge | None
    power: PowerMonitor
    power_off: HoldToPowerOff | None
    doorbell: Doorbell
    doorbell_hold: HoldToLetIn
    server: BaseWSGIServer | MultiSocketServer
    moments: MomentTeller | None  # Home Assistant's event entity, told at once with [mqtt]

    def __init__(
        self,
        config: Config,
        *,
        hardware: Hardware | None = None,
        sysfs: Path = Path("/"),
        clock: Clock = REAL_CLOCK,
    ) -> None:
        """`clock` times the launcher (fires, cues, rests, the button's hold, the hopper's and the wear's saves);
        the web server, the event log and the power monitor keep real time. Tests pass a virtual clock to make
        fires exact."""
        self.config, self.clock, self.sysfs = config, clock, sysfs
        self.make_hardware = (lambda: hardware) if hardware is not None else lambda: build_hardware(config, clock=clock)
        self._sockets: dict[int, object] = {}  # waitress' socket map: the listener and every connection
        self._stopping = False  # a signal has started the shutdown
        with contextlib.ExitStack() as undo:  # if any part fails to start, undo the ones already up, newest first
            for part in PARTS:
                built = part.build(self)
                if part.name is not None:
                    setattr(self, part.name, built)
                if part.undo is not None:
                    undo.callback(part.undo, self)
            undo.pop_all()
        self.bus.publish(EventType.DAEMON_STARTED, {"hardware": self.hardware.describe()})

    def listen(self) -> BaseWSGIServer | MultiSocketServer:
        """The web server, its socket bound (port 0: any free port) before the page is built, so the page knows it."""
        web = self.config.web
        family = socket.AF_INET6 if ":" in web.host else socket.AF_INET
        # "::" is every interface: IPv4 phones too (as ::ffff:a.b.c.d), where the kernel allows it, since the
        # addresses printed for phones are the LAN's IPv4 ones.
        dualstack = web.host == "::" and socket.has_dualstack_ipv6()
        try:
            sock = socket.create_server((web.host, web.port), family=family, backlog=128, dualstack_ipv6=dualstack)
        except OSError as e:
            raise StartupError(
                f"cannot listen on {web.host}:{web.port}: {e.strerror} (is another uno-launcher running? "
                "pick another port with --port)"
            ) from None
        for level, option, value in CONNECTION_OPTIONS:
            sock.setsockopt(level, option, value)
        self.urls = public_urls(web.host, sock.getsockname()[1])
        self.app = app = create_app(
            controller=self.controller,
            bus=self.bus,
            shuffles=self.shuffles,
            games=self.games,
            access=self.access,
            doorbell=self.doorbell,
            budgets=self.budgets,
            pin_guard=PinGuard(clock=self.clock.now),
            profiles=self.profiles,
            power=self.power,
            history=self.history,
            wear=self.wear,
            tournaments=self.tournaments,
            mqtt_link=self.mqtt_link,
            public_urls=self.urls,
            heartbeat_s=web.heartbeat_s,
        )
        return guarded_server(
            app,
            sock,
            self._sockets,
            threads=web.threads,
            # Open connections, streams and idle ones together. At this many the guard closes a waiting stranger's
            # to take a new one (launcher/access/connections.py), so it is far above what the streams may hold (see
            # webui/stream.py) and what a family's phones keep open, and below the 1,024 files a process may open
            # by default (systemd/uno-launcher.service says so with LimitNOFILE).
            connection_limit=CONNECTION_LIMIT,
            # A connection silent this long between requests is closed (an event stream is never idle: it has a
            # request under way). A slow sender that trickles a byte now and then: launcher/access/connections.py.
            channel_timeout=CHANNEL_TIMEOUT_S,
            # Refused before it is read: no request body reaches the disk (waitress spools big ones to a file).
            max_request_body_size=MAX_BODY_BYTES,
            # waitress keeps what it sent on a connection until this many bytes, then starts a new buffer: an
            # event stream never ends, so the default (16 MiB) would hold up to 16 MiB per phone
            outbuf_high_watermark=OUTBUF_HIGH_WATERMARK,
            # Reading on while a request is served is how waitress learns that a phone hung up its stream
            # (webui/stream.py frees its place then); one request read ahead is all a phone pipelines.
            channel_request_lookahead=1,
            asyncore_use_poll=True,
            ident="uno-launcher",
        )

    def serve(self) -> None:
        """Serve until SIGTERM or SIGINT, then shut everything down with the motor off."""
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        # The socket listens already; connections wait in its backlog until run() takes them.
        sdnotify.ready(f"serving {self.urls[0]} on {self.config.hardware.backend} hardware")
        watchdog = sdnotify.Watchdog(self.healthy)  # pings only under systemd's WatchdogSec=
        watchdog.start()
        try:
            self.server.run()  # returns once the signal handler's SystemExit has closed the server
        finally:
            sdnotify.stopping()
            watchdog.close()
            self.close()  # with our handlers still in place: a second signal must not cut the shutdown short
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if self.power_off is not None and self.power_off.requested:  # last: the store is closed, the motor off
            (simulated_power_off if self.config.hardware.backend == "sim" else system_power_off)()

    def healthy(self) -> bool:
        """For systemd's watchdog: the controller's worker answers and is not stuck on one press."""
        d = self.config.dispense
        longest_s = (MAX_PAUSE_MS + d.max_run_ms + d.reverse_ms + d.min_rest_ms) / 1000
        return self.controller.alive(stuck_after=longest_s + WATCHDOG_SLACK_S)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.controller.emergency_stop()
        if self._stopping:
            return  # Ctrl-C twice, or a signal to the whole process group: the shutdown under way finishes
        self._stopping = True
        self.bus.end_streams()  # open streams finish, so waitress' threads can stop at once
        raise SystemExit(0)  # waitress' loop catches it and closes the server

    def close(self) -> None:
        """Motor off, hardware released, pending events written, sockets closed. Safe to call twice."""
        if self.moments is not None:
            self.moments.close()
        if self.mqtt is not None:
            self.mqtt.close()  # first: the broker is told "offline" while the table is still whole
        self.power.close()
        if self.power_off is not None:
            self.power_off.close()
        self.doorbell_hold.close()
        self.access.close()  # the PINs shown on a first start are saved by then (two hashes at most)
        self.controller.close()  # its hopper saver hands over what is pending, then stops
        self.shuffles.close()  # a drand round still awaited settles nothing now: the next start waits for it again
        self.wear.close()  # after the controller: no fire ends any more; what is pending is written
        self.hardware.close()
        self.bus.close()
        self.server.task_dispatcher.shutdown(timeout=1)
        self.games.close()  # after the server's threads: no request changes the game any more
        self.writes.close()  # after everything that writes: what still waits is committed
        wasyncore.close_all(self._sockets)
        self._state_lock.close()  # last: the store is the next daemon's (or a restore's) only once all is written
