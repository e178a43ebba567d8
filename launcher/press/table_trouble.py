"""What stops the table after the last press (a jam, a stuck card, an empty hopper, a short fire) and the cards short
fires still owe, until it is put right; told as `trouble` in `/api/state`, with the FAULT and the open lid, which stop
the table too (docs/API.md, docs/GAME.md)."""

from __future__ import annotations

from typing import Any

from launcher.press.outcomes import FaultCause, FaultLatch, Trouble
from launcher.press.ticket import PressTicket


class TableTrouble:
    """The trouble the last presses left. The caller serialises the calls (the controller's lock)."""

    def __init__(self) -> None:
        # What stops the table after the last press (a jam, an empty hopper...): (trouble, its player, its press),
        # and the cards short fires still owe, until the hopper is refilled (docs/GAME.md).
        self._trouble: tuple[Trouble, str | None, int | None] | None = None
        self._owed: list[dict[str, Any]] = []
        self._jam_opened = False  # the lid was opened and shut since the last jam (is the card out? nothing can tell)

    def view(self, fault: FaultLatch, lid_open: bool | None) -> dict[str, Any] | None:
        """What stops the table now, for every phone's prompt (docs/API.md); None: play on."""
        owed = [dict(o) for o in self._owed]
        if fault.message is not None:
            code = Trouble.BOARD_LOST if fault.cause is FaultCause.BOARD else Trouble.FAULT
            return {"code": code.value, "player": None, "press": None, "owed": owed}
        jam = self.jam()
        if lid_open:
            lid = {"code": Trouble.LID_OPEN.value, "player": None, "press": None, "owed": owed}
            if jam is None or self._trouble is None:
                return lid
            _, player, press = self._trouble  # the card to take out while it is open, and whose press jammed
            return {**lid, "player": player, "press": press, "behind": jam.value}
        if self._trouble is None:
            return None
        code, player, press = self._trouble
        view = {"code": code.value, "player": player, "press": press, "owed": owed}
        return view if jam is None else {**view, "opened": self._jam_opened}

    def jam(self) -> Trouble | None:
        """The jam or stuck card the last press left, if any."""
        return (
            self._trouble[0] if self._trouble is not None and self._trouble[0] in (Trouble.JAM, Trouble.STUCK) else None
        )

    def note(self, ticket: PressTicket, found: tuple[Trouble, int] | None) -> None:
        """The trouble a press ended in, or none: a jam is over with the next press that is not one; an empty
        hopper and the cards a short fire owes stay until the refill."""
        if found is None:
            if self.jam() is not None:
                self._trouble = None
            return
        trouble, owed = found
        self._trouble = (trouble, ticket.player, ticket.outcome.press if ticket.deal is None else None)
        self._jam_opened = False
        if trouble is Trouble.SHORT and ticket.deal is None:  # classic UNO: the table keeps what is owed
            self._owed.append({"player": ticket.player, "cards": owed})

    def lid_shut(self) -> None:
        """The lid was shut: no sensor sees a card jammed before the exit beam, so a jam stays until a press brings
        no jam, and the phones ask whether the card is out."""
        self._jam_opened = self.jam() is not None

    def refilled(self) -> None:
        """The hopper was refilled: whoever was owed took their cards from the refill."""
        self._trouble, self._owed = None, []
