"""Letting waiting phones in from the launcher itself: its big button held for `HOLD_S`.

A hold, not a press, so that a game press never rings: the press that starts the hold is a game press as always
(the board may fire from its arm), and only holding on lets in. The hold is timed from the button's edges (`E BTN`,
`E UP`) by poweroff.py's `ButtonHold`, on the daemon's clock; the switch-off hold, when set, is told the same edges.
"""

from __future__ import annotations

import logging

from launcher.access.doorbell import Doorbell
from launcher.clock import REAL_CLOCK, Clock
from launcher.system.poweroff import ButtonEdges, ButtonHold

log = logging.getLogger(__name__)

HOLD_S = 3.0


class HoldToLetIn:
    """The button held for HOLD_S checks the newest waiting PINs (launcher/access/doorbell.py) and lets in the right
    ones."""

    def __init__(self, doorbell: Doorbell, *, inputs: ButtonEdges, clock: Clock = REAL_CLOCK) -> None:
        self._doorbell = doorbell
        self._hold = ButtonHold(hold_s=HOLD_S, refusal=lambda since: None, on_held=self._let_in, clock=clock)
        self._also = inputs.when_button_changed  # the switch-off hold's, if there is one
        inputs.when_button_changed = self._changed

    def close(self) -> None:
        self._hold.close()

    def _changed(self, pressed: bool) -> None:
        self._hold.button_changed(pressed)
        if self._also is not None:
            self._also(pressed)

    def _let_in(self) -> None:
        right = self._doorbell.check_newest()
        log.info("the button held %.0f s let in %d phone(s) waiting to join", HOLD_S, right)
