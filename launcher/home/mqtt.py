"""The table on a home MQTT broker: its events out, a shared tournament in and out, and a Home Assistant device.

The event log is the outbox (launcher/home/mqtt_outbox.py): it goes out in order, from the last event the broker
acknowledged, and a broker away for an hour, or a daemon restarted meanwhile, loses nothing.

Topics (docs/HOME.md has them all, docs/RELIABILITY.md who may publish what):
    uno-launcher/<table>/status              "online", or "offline" by the last will (retained)
    uno-launcher/<table>/event/<type>        each event told, as the phones get it (QoS 1)
    uno-launcher/<table>/state/<name>        presses, last_fire, hopper, fault, under_voltage (retained)
    uno-launcher/<table>/moment              the table's moments for Home Assistant's event entity (QoS 1; not
                                             through the outbox: news or nothing, launcher/home/moments.py)
    uno-launcher/tournament/<id>/…           tournaments, signed with their key (launcher/home/tournament_post.py)
    uno-launcher/<table>/command/new_shuffle Home Assistant's button, only with [mqtt] allow_new_shuffle

Nothing from the broker reaches the motor: the only messages taken are signed tournament messages, if the admin
allows it the request for a new shuffle, and for Home Assistant's device (launcher/home/home_assistant.py) its birth and
the old per-entity configs, which only make the device announced again. Anything else, or anything malformed, is a
log line. paho's callbacks only hand what happened to our `mqtt-inbox` thread, which does the work (the board, the
store) and keeps the link's state (launcher/home/mqtt_link.py), so paho's network thread never waits on the table.
"""

from __future__ import annotations

import logging
import ssl
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import TOURNAMENT_LEVEL, MqttConfig
from launcher.errors import LauncherError
from launcher.events import EventBus
from launcher.home.mqtt_link import MqttLink, RefusalLog
from launcher.home.mqtt_outbox import BATCH, MqttOutbox
from launcher.home.topics import ROOT, Message, Snapshot, state_messages, table_topic
from launcher.home.tournament_post import TournamentPost
from launcher.store import Store, mqtt_table
from launcher.threads import StoppableThread

if TYPE_CHECKING:  # built by the daemon, it builds its messages with this module's
    from launcher.home.home_assistant import HomeAssistant

log = logging.getLogger(__name__)

__all__ = ["MqttBridge", "MqttError", "Snapshot", "Unexpected"]  # Snapshot: what `snapshot` answers

SESSION_EXPIRY_S = 7 * 24 * 3600  # the broker keeps our session (and what it queued for us) this long offline
RECONNECT_S = (1, 30)  # paho's reconnect delay: first, doubling up to
MAX_INBOX = 1024  # what paho handed over and the inbox has not done yet; beyond, a message is dropped and counted
CATCH_UP_S = 10.0  # after messages were dropped, the retained tournament messages asked for again at most this often
MAX_PAYLOAD = 16 * 1024  # bytes of a message kept for the inbox: what the table takes is far smaller (4 KiB at most)


class MqttError(LauncherError, RuntimeError):
    """MQTT cannot be set up (a password file that cannot be read, a CA file TLS refuses)."""


class Unexpected(LauncherError, ValueError):
    """A message this table does not take: a topic nothing listens on, or a command it does not know."""


def tournament_topic(*levels: str) -> str:
    return "/".join((ROOT, TOURNAMENT_LEVEL, *levels))


def _password(config: MqttConfig) -> str | None:
    if config.password_file:
        try:
            return Path(config.password_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            raise MqttError(f"mqtt.password_file {config.password_file}: cannot read it ({e})") from None
    return config.password or None


class _Client(paho.Client):
    """paho's client, telling each failed attempt to connect with its error (paho's on_connect_fail has none)."""

    def __init__(self, failed: Callable[[OSError], None], **kwargs: Any) -> None:
        super().__init__(CallbackAPIVersion.VERSION2, **kwargs)
        self._failed = failed

    def reconnect(self) -> MQTTErrorCode:
        try:
            return super().reconnect()
        except OSError as e:  # refused, unreachable, a name that does not resolve, TLS
            self._failed(e)
            raise


def _why(error: OSError) -> str:
    return f"TLS: {error}" if isinstance(error, ssl.SSLError | ssl.CertificateError) else str(error) or repr(error)


class MqttBridge:
    """This table on the broker: the outbox thread, the inbox thread, paho's network thread, and what comes in."""

    def __init__(
        self,
        config: MqttConfig,
        *,
        bus: EventBus,
        store: Store,
        tournaments: TournamentPost,
        link: MqttLink,
        snapshot: Callable[[], Snapshot],
        new_shuffle: Callable[[], object],
        home: HomeAssistant,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        """`snapshot`: the launcher's state, sent at each connection. `new_shuffle`: Home Assistant's button, called
        only with [mqtt] allow_new_shuffle. `link`: the broker's state as /api/state tells it. `home`: the Home
        Assistant device, its discovery and the table's moments."""
        self._config = config
        self._tournaments = tournaments
        self.link = link
        self._snapshot = snapshot
        self._new_shuffle = new_shuffle
        self._home = home
        self._clock = clock
        self._status = table_topic(config.table, "status")
        self._outbox = MqttOutbox(
            table=config.table,
            bus=bus,
            store=store,
            tournaments=tournaments,
            publish=lambda message: self._publish(message).mid,
            clock=clock,
        )
        with store.connect() as conn:
            random = mqtt_table.client_random(conn)
        self._inbox: deque[Callable[[], None]] = deque()
        self._dropped = 0
        self._arrived = clock.condition()
        self._refusals = RefusalLog(clock=clock)
        self._client = self._make_client(config, f"uno-launcher-{config.table}-{random}")
        self._worker = StoppableThread(self._work, "mqtt-inbox", clock=clock, wake=self._wake_inbox)

    def _make_client(self, config: MqttConfig, client_id: str) -> paho.Client:
        client = _Client(
            lambda e: self._hand(lambda: self.link.down(_why(e))),
            client_id=client_id,
            protocol=paho.MQTTv5,
        )
        if config.username:
            client.username_pw_set(config.username, _password(config))
        if config.tls:
            try:
                client.tls_set(ca_certs=config.ca_file or None, cert_reqs=ssl.CERT_REQUIRED)
            except (OSError, ssl.SSLError) as e:
                raise MqttError(f"mqtt.ca_file {config.ca_file}: TLS cannot use it ({e})") from None
        client.will_set(self._status, "offline", qos=1, retain=True)
        client.reconnect_delay_set(*RECONNECT_S)
        client.max_inflight_messages_set(BATCH)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_message = self._on_message
        return client

    @property
    def connected(self) -> bool:
        return self._outbox.connected

    @property
    def sent(self) -> int:
        """The last event id the broker acknowledged."""
        return self._outbox.sent

    def publish_now(self, message: Message) -> bool:
        """Publish at once, outside the outbox (QoS 1, not awaited), what is news now or never
        (launcher/home/moments.py).
        False, and nothing sent, while the broker is away."""
        if not self.connected:
            return False
        self._publish(message)
        return True

    def _publish(self, message: Message) -> paho.MQTTMessageInfo:
        return self._client.publish(message.topic, message.payload, qos=1, retain=message.retain)

    def start(self) -> None:
        properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        properties.SessionExpiryInterval = SESSION_EXPIRY_S
        self._worker.start()
        self._client.connect_async(
            self._config.host,
            self._config.port,
            keepalive=self._config.keepalive_s,
            clean_start=False,
            properties=properties,
        )
        self._client.loop_start()
        self._outbox.start()

    def close(self) -> None:
        """Stop sending; tell the broker the table goes offline (the will says it when we cannot). Safe twice."""
        self._outbox.stop()
        if self.connected:
            self._client.publish(self._status, "offline", qos=1, retain=True).wait_for_publish(timeout=1)
        self._client.disconnect()
        self._client.loop_stop()
        self._worker.stop()
        self._tournaments.close()

    def joined(self, id: str) -> None:
        """A tournament joined here with its code: its retained messages and every table's rounds asked for."""
        self._hand(lambda: self._ask_for(id))

    # --- paho's network thread: each callback only hands its work to the inbox -------------------------------

    def _hand(self, work: Callable[[], None], *, droppable: bool = False) -> None:
        with self._arrived:
            if droppable and len(self._inbox) >= MAX_INBOX:
                self._dropped += 1
                return
            self._inbox.append(work)
            self._arrived.notify()

    def _wake_inbox(self) -> None:
        with self._arrived:
            self._arrived.notify_all()

    def _on_connect(self, client: paho.Client, userdata: Any, flags: Any, reason: ReasonCode, props: Any) -> None:
        if reason.is_failure:
            self._hand(lambda: self.link.down(str(reason), refused=True))
        else:
            self._hand(self._connected_now)

    def _on_disconnect(self, client: paho.Client, userdata: Any, flags: Any, reason: ReasonCode, props: Any) -> None:
        self._hand(lambda: self._lost(str(reason)))

    def _on_publish(self, client: paho.Client, userdata: Any, mid: int, reason: ReasonCode, props: Any) -> None:
        self._outbox.acknowledged(mid)

    def _on_message(self, client: paho.Client, userdata: Any, message: paho.MQTTMessage) -> None:
        topic, size = message.topic, len(message.payload)
        if size > MAX_PAYLOAD:  # not queued: a flood of large messages must not fill the Pi's memory
            self._hand(lambda: self._refusals.refused(topic, f"{size} bytes is more than it takes"), droppable=True)
            return
        payload, retained = bytes(message.payload), bool(message.retain)
        self._hand(lambda: self._judge(topic, payload, retained), droppable=True)

    # --- the inbox thread -------------------------------------------------------------------------------------

    def _work(self) -> None:
        stopping = self._worker.stopping
        behind, caught_up = False, -CATCH_UP_S  # messages dropped since the last catch-up; when that was
        while not stopping.is_set():
            wait = self.link.tick()
            behind = behind and self.connected  # else the next connection subscribes and asks anyway
            if behind:
                wait = max(0.0, min(wait, caught_up + CATCH_UP_S - self._clock.now()))
            with self._arrived:
                if not self._inbox:
                    self._arrived.wait(timeout=wait)
                jobs, self._inbox = self._inbox, deque()
                dropped, self._dropped = self._dropped, 0
            if dropped:
                log.warning("%d MQTT messages dropped: more came than this table takes", dropped)
                behind = True
            for job in jobs:
                job()
            if behind and self._clock.now() >= caught_up + CATCH_UP_S:
                self._catch_up()
                behind, caught_up = False, self._clock.now()

    def _catch_up(self) -> None:
        """After messages were dropped (a genuine round among a flood, perhaps): subscribing again has the broker
        send every retained tournament message again, and every table is asked for its rounds. At most once every
        CATCH_UP_S, so a flood kept up is not answered with the broker's whole store each time the inbox fills."""
        self._client.subscribe(tournament_topic("#"), options=SubscribeOptions(qos=1, noLocal=True))
        self._send(self._tournaments.asks())

    def _connected_now(self) -> None:
        log.info("connected to the MQTT broker %s as table %s", self._config.broker, self._config.table)
        self.link.up()
        client = self._client
        client.publish(self._status, "online", qos=1, retain=True)
        presses = self._outbox.presses
        try:
            snapshot = self._snapshot()
        except LauncherError as e:  # a store in trouble: the outbox's state messages still come
            log.warning("the launcher's state for MQTT cannot be read: %s", e)
            snapshot = None
        extra = self._home.announcement()
        for message in state_messages(self._config.table, presses=presses, snapshot=snapshot) + extra:
            self._publish(message)
        # No local: what this table publishes is not sent back to it (its retained rounds still come at a start).
        subscriptions = [(tournament_topic("#"), SubscribeOptions(qos=1, noLocal=True))]
        if self._config.allow_new_shuffle:
            subscriptions.append((table_topic(self._config.table, "command", "#"), SubscribeOptions(qos=1)))
        subscriptions += [(topic, SubscribeOptions(qos=1)) for topic in self._home.subscriptions()]
        client.subscribe(subscriptions)
        # A broker that lost its retained messages is filled again, and a table that was away catches up.
        self._send(self._tournaments.announcements() + self._tournaments.asks())
        self._outbox.resume()

    def _lost(self, reason: str) -> None:
        if self._outbox.pause():  # else the attempt's own failure or the broker's refusal said why, and stays said
            self.link.down(reason)
            log.warning("the MQTT broker is gone (%s): the table plays on, its events wait in the log", reason)

    def _ask_for(self, id: str) -> None:
        if self.connected:  # else the next connection subscribes to everything and asks for it
            self._client.subscribe(tournament_topic(id, "#"), options=SubscribeOptions(qos=1, noLocal=True))
            self._send(self._tournaments.asks(id))

    def _send(self, signed: list[tuple[str, str]]) -> None:
        for topic, payload in signed:
            self._client.publish(topic, payload, qos=1, retain="/ask/" not in topic)

    def _judge(self, topic: str, payload: bytes, retained: bool) -> None:
        """Whatever comes in is judged here; a refusal is one log line, never an exception out of the inbox."""
        try:
            if self._home.takes(topic):
                for answer in self._home.receive(topic, payload, retained=retained):
                    self._publish(answer)
            else:
                self._take(topic, payload)
        except LauncherError as e:  # refused: malformed, unsigned, foreign, or the launcher cannot now (busy)
            self._refusals.refused(topic, e)
        except Exception:  # a bug must not end the inbox, and with it the table's link
            log.exception("MQTT message on %.120r could not be handled", topic)

    def _take(self, topic: str, payload: bytes) -> None:
        levels = topic.split("/")
        if levels[:2] == [ROOT, TOURNAMENT_LEVEL]:
            if not payload:  # a retained message cleared: what this table holds of it goes back
                self._send(self._tournaments.wiped(levels[2:]))
                return
            self._send(self._tournaments.receive(levels[2:], payload))
        elif self._config.allow_new_shuffle and topic == table_topic(self._config.table, "command", "new_shuffle"):
            if payload != b"PRESS":
                raise Unexpected("the new shuffle button sends PRESS")
            log.info("Home Assistant asks for a new shuffle")
            self._new_shuffle()
        else:
            raise Unexpected("nothing of this table listens there")
