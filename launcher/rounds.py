"""Rounds: each round plays one seeded schedule, committed at its start and revealed at its end.

The seed and the commitment are saved when a round starts (so a restarted daemon resumes the same round, replaying
the presses the event log holds), and the record with the seed revealed is saved when it ends. The controller calls
this between presses, never on the press-to-motor path.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from launcher.events import EventBus, EventType
from launcher.fairness import commitment, new_seed, round_record
from launcher.schedule import Outcome, Profile, Schedule, profile_from_mapping, profile_to_mapping
from launcher.store import Store


class DrawsOutcomes(Protocol):
    """What a round needs of a schedule (tests script one)."""

    presses: int
    misses_in_row: int
    tension: float

    def next_outcome(self) -> Outcome: ...

    def restart(self) -> None: ...


ScheduleFactory = Callable[[Profile, str], DrawsOutcomes]


class RoundOpen(Exception):
    """The round is still being played: its seed is secret."""


@dataclass
class Round:
    number: int
    profile: Profile
    seed: str
    commitment: str
    schedule: DrawsOutcomes
    outcomes: list[Outcome] = field(default_factory=list)
    restarts: list[int] = field(default_factory=list)

    def draw(self) -> Outcome:
        outcome = self.schedule.next_outcome()
        self.outcomes.append(outcome)
        return outcome

    def summary(self) -> dict[str, Any]:
        """What everyone may see while the round is played (never the seed)."""
        return {
            "number": self.number,
            "profile": self.profile.name,
            "commitment": self.commitment,
            "presses": self.schedule.presses,
        }

    def record(self) -> dict[str, Any]:
        return {"round": self.number, **round_record(self.profile, self.seed, self.outcomes, self.restarts)}


class RoundBook:
    """Starts, ends, saves and resumes rounds."""

    def __init__(self, store: Store, bus: EventBus, schedule_factory: ScheduleFactory = Schedule) -> None:
        self._store = store
        self._bus = bus
        self._schedule_factory = schedule_factory

    def resume_or_start(self, profile: Profile) -> Round:
        """The round left open by the last run, replayed to where its log ends; else a new round."""
        with self._store.connect() as conn:
            row = self._store.open_round(conn)
            if row is None:
                return self.start(profile)
            number, profile_json, seed, started_event, restarts = row
            presses = self._store.count_events_after(conn, "button.pressed", started_event)
        saved = json.loads(profile_json)
        resumed = self._new_round(number, profile_from_mapping(saved["name"], saved["parameters"]), seed)
        resumed.restarts = [r for r in json.loads(restarts) if r <= presses]
        for done in range(presses + 1):  # replay the lid openings where they happened, as fairness.replay does
            if done in resumed.restarts:
                resumed.schedule.restart()
            if done < presses:
                resumed.draw()
        return resumed

    def lid_opened(self, played: Round) -> None:
        """The lid opened: the pattern profile starts over, as on the original launcher. Saved at once."""
        if played.schedule.presses not in played.restarts:
            played.restarts.append(played.schedule.presses)
        played.schedule.restart()
        with self._store.connect() as conn:
            self._store.set_round_restarts(conn, played.number, json.dumps(played.restarts))

    def start(self, profile: Profile) -> Round:
        with self._store.connect() as conn:
            number = self._store.last_round_number(conn) + 1
            started = self._new_round(number, profile, new_seed())
            event = self._bus.publish(EventType.ROUND_STARTED, self._announcement(started))
            profile_json = json.dumps({"name": profile.name, "parameters": profile_to_mapping(profile)})
            self._store.start_round(conn, number, profile_json, started.seed, started.commitment, event.id, event.ts)
        return started

    def end(self, ended: Round) -> dict[str, Any]:
        """Reveal the seed: save the record and tell everyone."""
        record = ended.record()
        with self._store.connect() as conn:
            self._store.end_round(conn, ended.number, json.dumps(record), time.time())
        self._bus.publish(
            EventType.ROUND_ENDED,
            {**self._announcement(ended), "seed": ended.seed, "presses": len(ended.outcomes)},
        )
        return record

    def record(self, number: int) -> dict[str, Any] | None:
        """The record of an ended round; None if there is no such round; RoundOpen while it is played."""
        with self._store.connect() as conn:
            found = self._store.round_record(conn, number)
        if found is None:
            return None
        record_json, ended = found
        if not ended:
            raise RoundOpen(f"round {number} is still being played; its seed is revealed when it ends")
        return json.loads(record_json)

    def _new_round(self, number: int, profile: Profile, seed: str) -> Round:
        return Round(number, profile, seed, commitment(seed), self._schedule_factory(profile, seed))

    @staticmethod
    def _announcement(played: Round) -> dict[str, Any]:
        return {"round": played.number, "profile": played.profile.name, "commitment": played.commitment}
