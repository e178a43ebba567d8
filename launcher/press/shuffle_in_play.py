"""The shuffle in play: resumed where the last run left it, and ended (its seed revealed) for the next when it is full
or another is asked for. The next goes on from the run of misses or fires the last ended with if it plays the same
profile (docs/FAIRNESS.md)."""

from __future__ import annotations

from typing import Any

from launcher.config import SHUFFLE_PRESSES
from launcher.fairplay.schedule import Profile
from launcher.fairplay.shuffles import Shuffle, ShuffleBook, ShuffleSealing


class ShuffleInPlay:
    """`current`: the shuffle the presses draw from. The caller serialises the calls (the controller's lock)."""

    def __init__(self, shuffles: ShuffleBook, profile: Profile, *, presses: int = SHUFFLE_PRESSES) -> None:
        self._shuffles = shuffles
        self._presses = presses
        self.current: Shuffle = shuffles.resume_or_start(profile)
        self.next_if_full()  # left full by the last run, or by a lower setting

    def next(self, profile: Profile) -> dict[str, Any]:
        """Between presses: end the shuffle (its record) and start the next, which goes on from the run of misses
        or fires this one ended with if it plays the same profile."""
        ended = self.current
        record = self._shuffles.end(ended)
        self.current = self._shuffles.start(profile, carried=ended.run if profile == ended.profile else (0, 0))
        return record

    def next_if_full(self) -> None:
        """A full shuffle: the next begins, with the same profile."""
        if self.current.schedule.presses >= self._presses:
            self.next(self.current.profile)

    def sealing(self) -> str | None:
        """Before a press draws (with the lock held): why it waits while the phones reveal their bytes for the
        shuffle's key (launcher/fairplay/mixing.py); None: it may draw."""
        try:
            self._shuffles.ready(self.current)
        except ShuffleSealing as sealing:
            return str(sealing)
        return None
