"""The daemon's parts, declared once each in `PARTS`: the attribute a part is kept in, how it is built from the
config and the parts before it, and how a start that fails later undoes it. `Daemon` builds them in this order
(launcher/daemon.py); its `close()` takes them down in the shutdown's own order."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from launcher.access.book import AccessBook
from launcher.access.budgets import Budget, Budgets
from launcher.access.doorbell import Doorbell
from launcher.access.doorbell_hold import HoldToLetIn
from launcher.clock import REAL_CLOCK
from launcher.errors import LauncherError
from launcher.events import EventBus
from launcher.fairplay.beacon_wait import BeaconSource
from launcher.fairplay.schedule import PROFILES
from launcher.fairplay.shuffles import ShuffleBook
from launcher.hardware.base import Aims, Links, Refills
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
from launcher.system.power import PowerMonitor, PowerWarning, SysfsPowerFlags
from launcher.system.poweroff import HoldToPowerOff
from launcher.system.statelock import StateDirBusy, StateLock
from launcher.table.games import GameDesk
from launcher.table.history import History

if TYPE_CHECKING:  # the daemon is what every part is built into; it imports this module for the declaration
    from launcher.daemon import Daemon

log = logging.getLogger(__name__)

LOCAL_TABLE = "table"  # this table's name in a tournament when it has no [mqtt] table


class StartupError(LauncherError, RuntimeError):
    """The daemon cannot start; the message says why, for the console."""


@dataclass(frozen=True, slots=True)
class Part:
    """One line of the declaration. `name`: the daemon's attribute the part is kept in (None: a step that keeps
    nothing). `build`: the part, from the config and the parts before it. `undo`: what a start that fails after it
    does (close it; for the PINs just made up, forget them)."""

    name: str | None
    build: Callable[[Daemon], object]
    undo: Callable[[Daemon], object] | None = None


def _store(d: Daemon) -> Store:
    store = Store(d.config.state_dir / STORE_FILE)  # first: it names what is wrong with the directory
    if (volatile := kept_in_memory(store.path)) is not None:  # an overlay root: gone at the next boot
        log.warning("%s", volatile)
    return store


def _state_lock(d: Daemon) -> StateLock:
    try:
        return StateLock(d.config.state_dir)  # one daemon per store, held until close()
    except StateDirBusy as e:
        raise StartupError(str(e)) from None


def _history(d: Daemon) -> History:
    history = History(d.store)
    history.catch_up()  # games kept before the history existed
    return history


def _controller(d: Daemon) -> Controller:
    controller = Controller(
        hardware=d.hardware,
        shuffles=d.shuffles,
        profile=d.config.schedule.active_profile,
        bus=d.bus,
        # Saved as each card leaves, so that a restart (even after kill -9) knows what is in the hopper.
        hopper=Hopper(
            _saved_hopper(d),
            on_changed=lambda count: _save_hopper(d, count),
            on_reload=d.hardware.refill if isinstance(d.hardware, Refills) else None,
            sync=d.writes.flush,
            clock=d.clock,
        ),
        min_rest_ms=d.config.dispense.min_rest_ms,
        game=d.games,
        wear=d.wear,
        shuffle_presses=d.config.schedule.shuffle_presses,
        clock=d.clock,
    )
    d.games.starting = controller.arming_paused
    return controller


def _saved_hopper(d: Daemon) -> HopperCount:
    """The hopper as the last run left it (full on a first start); the simulated one is set to match."""
    with d.store.connect() as conn:
        try:
            saved = hopper_table.load(conn)
        except (TypeError, ValueError) as e:  # only an edited or damaged store's row
            raise d.store.damaged("the hopper's count", e) from None
    count = HopperCount(*saved) if saved else HopperCount(loaded=d.config.dispense.hopper_cards, dispensed=0)
    if isinstance(d.hardware, Refills):
        d.hardware.refill(count.remaining)
    return count


def _save_hopper(d: Daemon, count: HopperCount) -> None:
    """On the hopper saver's thread: the newest count to the write-behind, written with the press's commit (the
    game's change) or within COUNT_SAVE_WITHIN_S."""
    d.writes.later(
        "hopper",
        lambda conn: hopper_table.save(conn, count.loaded, count.dispensed),
        within_s=COUNT_SAVE_WITHIN_S,
    )


def _mqtt_bridge(d: Daemon) -> MqttBridge | None:
    """[mqtt]: the table on the home broker. Its outbox thread waits on the network and the event log, which keep
    real time, as the web server does."""
    if d.mqtt_link is None:
        return None
    try:
        bridge = MqttBridge(
            d.config.mqtt,
            bus=d.bus,
            store=d.store,
            tournaments=TournamentPost(d.tournaments, check_store=d.budgets.check_store),
            link=d.mqtt_link,
            snapshot=lambda: _mqtt_snapshot(d),
            new_shuffle=lambda: _new_shuffle_from_home(d),
            home=HomeAssistant(d.config.mqtt, page_url=lambda: d.urls[-1]),  # as the console's QR code gives it
            clock=REAL_CLOCK,
        )
    except MqttError as e:
        raise StartupError(str(e)) from None
    d.tournaments.on_join(bridge.joined)
    return bridge  # started once the server listens; it connects in the background (a broker down holds nothing)


def _new_shuffle_from_home(d: Daemon) -> None:
    """Home Assistant's button: any client on the broker can press it, so it spends what POST /api/shuffles
    spends, under one key for the whole broker (refused, it is a line in the bridge's refusal log)."""
    d.budgets.spend(Budget.SHUFFLES, "mqtt")
    d.controller.new_shuffle()


def _mqtt_snapshot(d: Daemon) -> Snapshot:
    state = d.controller.snapshot()
    weak = PowerWarning.UNDER_VOLTAGE in d.power.snapshot()["warnings"]
    return Snapshot(hopper=state["hopper"]["remaining"], fault=state["fault"] is not None, under_voltage=weak)


def _power(d: Daemon) -> PowerMonitor:
    power = PowerMonitor(SysfsPowerFlags(d.sysfs), bus=d.bus)  # the Pi's brown-out warnings
    power.start()
    return power


def _power_off_button(d: Daemon) -> HoldToPowerOff | None:
    """[power] hold_to_poweroff_s: the big button held while the launcher is quiet switches the Pi off."""
    if not d.config.power.hold_to_poweroff_s:
        return None
    return HoldToPowerOff(
        hold_s=d.config.power.hold_to_poweroff_s,
        inputs=d.hardware.inputs,
        quiet_since=d.controller.quiet_since,
        attack_open=lambda: _attack_open(d),
        bus=d.bus,
        stop_motor=d.controller.emergency_stop,
        shut_down=_shut_down_from_a_thread,
        clock=d.clock,
    )


def _attack_open(d: Daemon) -> bool:
    game = d.games.view()
    return game is not None and bool(game["table"]["demands"])


def _shut_down_from_a_thread() -> None:
    """The shutdown SIGTERM starts, in the main thread, where serve() runs (and where Python runs handlers)."""
    main = threading.main_thread().ident
    assert main is not None  # the main thread has always started
    signal.pthread_kill(main, signal.SIGTERM)


def _follow_link(d: Daemon) -> None:
    """A board on USB can come and go: its link state becomes the controller's FAULT, and back."""
    if not isinstance(d.hardware, Links):
        return  # the GPIO header does not come and go
    d.hardware.when_link_changed = d.controller.link_changed
    if d.hardware.describe().get("link") != "up":  # read after attaching, so no change falls between
        d.controller.link_changed(False, "waiting for the board to answer")
    else:
        d.controller.link_changed(True, "the board answered")  # the board may be armed for the next press


def _moments(d: Daemon) -> MomentTeller | None:
    """With [mqtt], once the page's address is known (Home Assistant's device links to it): the bridge started,
    and Home Assistant's event entity told each moment at once."""
    if d.mqtt is None:
        return None
    d.mqtt.start()
    moments = MomentTeller(d.config.mqtt.table, bus=d.bus, send=d.mqtt.publish_now)
    moments.start()
    return moments


class _Closes(Protocol):
    def close(self) -> None: ...


def _close(part: _Closes | None) -> None:
    if part is not None:
        part.close()


PARTS: tuple[Part, ...] = (
    Part("store", _store),
    Part("_state_lock", _state_lock, undo=lambda d: d._state_lock.close()),
    # The frequent writes (events, the hopper's count, the wear counters) wait here for the next commit.
    Part("writes", lambda d: WriteBehind(d.store, clock=d.clock), undo=lambda d: d.writes.close()),
    Part(
        "bus",
        lambda d: EventBus(d.store, keep_days=d.config.state.keep_events_days, writes=d.writes),
        undo=lambda d: d.bus.close(),
    ),
    Part(
        "hardware",
        lambda d: d.make_hardware(),
        undo=lambda d: d.hardware.close(),
    ),
    Part("profiles", lambda d: {**PROFILES, "custom": d.config.schedule.custom}),
    Part("access", lambda d: AccessBook(d.store)),
    # Made up on a first start: the one time they can be shown. A start that fails from here on shows them
    # nowhere: forgotten, the next start makes up new ones.
    Part("new_pins", lambda d: d.access.first_run(), undo=lambda d: d.access.forget_unshown(d.new_pins)),
    Part(
        "shuffles",
        lambda d: ShuffleBook(
            d.store,
            d.bus,
            clock=d.clock,
            beacon=BeaconSource() if d.config.fairness.beacon == "drand-quicknet" else None,
        ),
        undo=lambda d: d.shuffles.close(),
    ),
    Part("aimer", lambda d: SeatAimer(d.hardware.aim_at) if isinstance(d.hardware, Aims) else None),
    Part("history", _history),
    Part(
        "games",
        lambda d: GameDesk(
            d.store,
            d.bus,
            history=d.history,
            on_change=d.aimer.face if d.aimer else None,
            clock=d.clock,
            writes=d.writes,
        ),
        undo=lambda d: d.games.close(),
    ),
    # The launcher's lifetime counters, for the admin.
    Part("wear", lambda d: Wear.kept_in(d.store, clock=d.clock, writes=d.writes), undo=lambda d: d.wear.close()),
    Part("controller", _controller, undo=lambda d: d.controller.close()),
    Part("tournaments", lambda d: TournamentBook(d.store, d.bus, table=d.config.mqtt.table or LOCAL_TABLE)),
    # What joined phones may spend.
    Part("budgets", lambda d: Budgets(d.config.limits, d.store.path, clock=d.clock)),
    Part("mqtt_link", lambda d: MqttLink(d.config.mqtt.broker) if d.config.mqtt.enabled else None),
    Part("mqtt", _mqtt_bridge, undo=lambda d: _close(d.mqtt)),
    Part("power", _power, undo=lambda d: d.power.close()),
    Part("power_off", _power_off_button, undo=lambda d: _close(d.power_off)),
    # PINs that cannot be checked now wait for a person to let them in: a joined phone, or this hold.
    Part("doorbell", lambda d: Doorbell(check=d.access.role_for_pin, clock=d.clock)),
    Part(
        "doorbell_hold",
        lambda d: HoldToLetIn(d.doorbell, inputs=d.hardware.inputs, clock=d.clock),
        undo=lambda d: d.doorbell_hold.close(),
    ),
    Part(None, _follow_link),
    Part("server", lambda d: d.listen()),  # bound first, so that port 0 (any free port) is known to the page
    Part("moments", _moments),
)
