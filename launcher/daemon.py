"""The daemon: builds every part from the config, serves the page, and shuts down with the motor off.

One process: the hardware backend, the controller, the event bus with its SQLite writer, and waitress serving
the Flask app in-process. SIGTERM and SIGINT stop the motor first, end the live streams, then close the rest.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import threading
from pathlib import Path
from types import FrameType

from waitress import wasyncore
from waitress.server import BaseWSGIServer, MultiSocketServer

from launcher.access.book import AccessBook, PinGuard
from launcher.access.budgets import Budget, Budgets
from launcher.access.connections import guarded_server
from launcher.access.doorbell import Doorbell
from launcher.access.doorbell_hold import HoldToLetIn
from launcher.clock import REAL_CLOCK, Clock
from launcher.config import Config
from launcher.errors import LauncherError
from launcher.events import EventBus, EventType
from launcher.fairplay.beacon_wait import BeaconSource
from launcher.fairplay.schedule import MAX_PAUSE_MS, PROFILES
from launcher.fairplay.shuffles import ShuffleBook
from launcher.hardware.base import Aims, Hardware, Links, Refills
from launcher.home.home_assistant import HomeAssistant
from launcher.home.moments import MomentTeller
from launcher.home.mqtt import MqttBridge, MqttError, Snapshot
from launcher.home.mqtt_link import MqttLink
from launcher.home.tournament import TournamentBook
from launcher.home.tournament_post import TournamentPost
from launcher.press.aiming import SeatAimer
from launcher.press.controller import Controller
from launcher.press.hopper import COUNT_SAVE_WITHIN_S, Hopper, HopperCount
from launcher.press.wear import Wear
from launcher.store import STORE_FILE, Store, WriteBehind, hopper_table
from launcher.store.placement import kept_in_memory
from launcher.system import sdnotify
from launcher.system.netinfo import public_urls
from launcher.system.power import PowerMonitor, PowerWarning, SysfsPowerFlags
from launcher.system.poweroff import HoldToPowerOff, simulated_power_off, system_power_off
from launcher.system.statelock import StateDirBusy, StateLock
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
LOCAL_TABLE = "table"  # this table's name in a tournament when it has no [mqtt] table
WATCHDOG_SLACK_S = 5.0  # beyond the longest pause, fire and rest, before the controller's worker counts as stuck


class StartupError(LauncherError, RuntimeError):
    """The daemon cannot start; the message says why, for the console."""


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
        self.config = config
        self.clock = clock
        with contextlib.ExitStack() as undo:  # if any part fails to start, close the ones already up
            self.store = Store(config.state_dir / STORE_FILE)  # first: it names what is wrong with the directory
            if (volatile := kept_in_memory(self.store.path)) is not None:  # an overlay root: gone at the next boot
                log.warning("%s", volatile)
            try:
                self._state_lock = StateLock(config.state_dir)  # one daemon per store, held until close()
            except StateDirBusy as e:
                raise StartupError(str(e)) from None
            undo.callback(self._state_lock.close)
            # The frequent writes (events, the hopper's count, the wear counters) wait here for the next commit.
            self.writes = WriteBehind(self.store, clock=clock)
            undo.callback(self.writes.close)
            self.bus = EventBus(self.store, keep_days=config.state.keep_events_days, writes=self.writes)
            undo.callback(self.bus.close)
            self.hardware = hardware or build_hardware(config, clock=clock)
            undo.callback(self.hardware.close)
            self.profiles = {**PROFILES, "custom": config.schedule.custom}
            self.access = AccessBook(self.store)
            self.new_pins = self.access.first_run()  # made up on a first start: the one time they can be shown
            # A start that fails from here on shows them nowhere: forgotten, the next start makes up new ones.
            undo.callback(self.access.forget_unshown, self.new_pins)
            beacon = BeaconSource() if config.fairness.beacon == "drand-quicknet" else None
            self.shuffles = ShuffleBook(self.store, self.bus, clock=clock, beacon=beacon)
            undo.callback(self.shuffles.close)
            aimer = SeatAimer(self.hardware.aim_at) if isinstance(self.hardware, Aims) else None
            self.history = History(self.store)
            self.history.catch_up()  # games kept before the history existed
            self.games = GameDesk(
                self.store,
                self.bus,
                history=self.history,
                on_change=aimer.face if aimer else None,
                clock=clock,
                writes=self.writes,
            )
            undo.callback(self.games.close)
            # The launcher's lifetime counters, for the admin.
            self.wear = Wear.kept_in(self.store, clock=clock, writes=self.writes)
            undo.callback(self.wear.close)
            self.controller = Controller(
                hardware=self.hardware,
                shuffles=self.shuffles,
                profile=config.schedule.active_profile,
                bus=self.bus,
                # Saved as each card leaves, so that a restart (even after kill -9) knows what is in the hopper.
                hopper=Hopper(
                    self._saved_hopper(),
                    on_changed=self._save_hopper,
                    on_reload=self.hardware.refill if isinstance(self.hardware, Refills) else None,
                    sync=self.writes.flush,
                    clock=clock,
                ),
                min_rest_ms=config.dispense.min_rest_ms,
                game=self.games,
                wear=self.wear,
                shuffle_presses=config.schedule.shuffle_presses,
                clock=clock,
            )
            self.games.starting = self.controller.arming_paused
            undo.callback(self.controller.close)
            self.tournaments = TournamentBook(self.store, self.bus, table=config.mqtt.table or LOCAL_TABLE)
            self.budgets = Budgets(config.limits, self.store.path, clock=clock)  # what joined phones may spend
            self.mqtt_link = MqttLink(config.mqtt.broker) if config.mqtt.enabled else None
            self.mqtt = self._mqtt_bridge()
            self.moments: MomentTeller | None = None  # Home Assistant's event entity, told at once with [mqtt]
            if self.mqtt is not None:
                undo.callback(self.mqtt.close)
            self.power = PowerMonitor(SysfsPowerFlags(sysfs), bus=self.bus)  # the Pi's brown-out warnings
            self.power.start()
            undo.callback(self.power.close)
            self.power_off = self._power_off_button(config.power.hold_to_poweroff_s)
            if self.power_off is not None:
                undo.callback(self.power_off.close)
            # PINs that cannot be checked now wait for a person to let them in: a joined phone, or this hold.
            self.doorbell = Doorbell(check=self.access.role_for_pin, clock=clock)
            self.doorbell_hold = HoldToLetIn(self.doorbell, inputs=self.hardware.inputs, clock=clock)
            undo.callback(self.doorbell_hold.close)
            self._follow_link()
            self._sockets: dict[int, object] = {}  # waitress' socket map: the listener and every connection
            self._stopping = False  # a signal has started the shutdown
            self.server = self._listen()
            if self.mqtt is not None:
                self.mqtt.start()  # once the page's address is known: Home Assistant's device links to it
                self.moments = MomentTeller(config.mqtt.table, bus=self.bus, send=self.mqtt.publish_now)
                self.moments.start()
            undo.pop_all()
        self.bus.publish(EventType.DAEMON_STARTED, {"hardware": self.hardware.describe()})

    def _mqtt_bridge(self) -> MqttBridge | None:
        """[mqtt]: the table on the home broker. Its outbox thread waits on the network and the event log, which keep
        real time, as the web server does."""
        if not self.config.mqtt.enabled:
            return None
        try:
            assert self.mqtt_link is not None
            bridge = MqttBridge(
                self.config.mqtt,
                bus=self.bus,
                store=self.store,
                tournaments=TournamentPost(self.tournaments, check_store=self.budgets.check_store),
                link=self.mqtt_link,
                snapshot=self._mqtt_snapshot,
                new_shuffle=self._new_shuffle_from_home,
                home=HomeAssistant(self.config.mqtt, page_url=self._page_url),
                clock=REAL_CLOCK,
            )
        except MqttError as e:
            raise StartupError(str(e)) from None
        self.tournaments.on_join(bridge.joined)
        return bridge  # started once the server listens; it connects in the background (a broker down holds nothing)

    def _new_shuffle_from_home(self) -> None:
        """Home Assistant's button: any client on the broker can press it, so it spends what POST /api/shuffles
        spends, under one key for the whole broker (refused, it is a line in the bridge's refusal log)."""
        self.budgets.spend(Budget.SHUFFLES, "mqtt")
        self.controller.new_shuffle()

    def _page_url(self) -> str:
        """The page's address, as the console's QR code gives it (read once the server listens)."""
        return self.urls[-1]

    def _mqtt_snapshot(self) -> Snapshot:
        state = self.controller.snapshot()
        weak = PowerWarning.UNDER_VOLTAGE in self.power.snapshot()["warnings"]
        return Snapshot(hopper=state["hopper"]["remaining"], fault=state["fault"] is not None, under_voltage=weak)

    def _saved_hopper(self) -> HopperCount:
        """The hopper as the last run left it (full on a first start); the simulated one is set to match."""
        with self.store.connect() as conn:
            try:
                saved = hopper_table.load(conn)
            except (TypeError, ValueError) as e:  # only an edited or damaged store's row
                raise self.store.damaged("the hopper's count", e) from None
        count = HopperCount(*saved) if saved else HopperCount(loaded=self.config.dispense.hopper_cards, dispensed=0)
        if isinstance(self.hardware, Refills):
            self.hardware.refill(count.remaining)
        return count

    def _save_hopper(self, count: HopperCount) -> None:
        """On the hopper saver's thread: the newest count to the write-behind, written with the press's commit (the
        game's change) or within COUNT_SAVE_WITHIN_S."""
        self.writes.later(
            "hopper",
            lambda conn: hopper_table.save(conn, count.loaded, count.dispensed),
            within_s=COUNT_SAVE_WITHIN_S,
        )

    def _follow_link(self) -> None:
        """A board on USB can come and go: its link state becomes the controller's FAULT, and back."""
        if not isinstance(self.hardware, Links):
            return  # the GPIO header does not come and go
        self.hardware.when_link_changed = self.controller.link_changed
        if self.hardware.describe().get("link") != "up":  # read after attaching, so no change falls between
            self.controller.link_changed(False, "waiting for the board to answer")
        else:
            self.controller.link_changed(True, "the board answered")  # the board may be armed for the next press

    def _power_off_button(self, hold_s: float) -> HoldToPowerOff | None:
        """[power] hold_to_poweroff_s: the big button held while the launcher is quiet switches the Pi off."""
        if not hold_s:
            return None
        return HoldToPowerOff(
            hold_s=hold_s,
            inputs=self.hardware.inputs,
            quiet_since=self.controller.quiet_since,
            attack_open=self._attack_open,
            bus=self.bus,
            stop_motor=self.controller.emergency_stop,
            shut_down=self._shut_down_from_a_thread,
            clock=self.clock,
        )

    def _attack_open(self) -> bool:
        game = self.games.view()
        return game is not None and bool(game["table"]["demands"])

    @staticmethod
    def _shut_down_from_a_thread() -> None:
        """The shutdown SIGTERM starts, in the main thread, where serve() runs (and where Python runs handlers)."""
        main = threading.main_thread().ident
        assert main is not None  # the main thread has always started
        signal.pthread_kill(main, signal.SIGTERM)

    def _listen(self) -> BaseWSGIServer | MultiSocketServer:
        web = self.config.web
        # Bind first, so that port 0 (any free port) is known before the page is built.
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
