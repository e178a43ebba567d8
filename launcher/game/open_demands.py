"""The demands still open at one table, in the order they are served: what holds play, a stack answered, a press
served. The plays append, remove and replace demands as the cards say, so this is a list; what the table asks of
the whole queue is here."""

from __future__ import annotations

from dataclasses import replace

from launcher.game.cards import GameError
from launcher.game.demands import HOLDS_PLAY, Cause, Demand, Press
from launcher.refusals import Refusal


class OpenDemands(list[Demand]):
    """Every open demand, the one being served first."""

    def holding_play(self) -> list[Demand]:
        return [demand for demand in self if demand.cause in HOLDS_PLAY]

    def check_free(self) -> None:
        holding = self.holding_play()
        if holding:
            first = holding[0]
            raise GameError(
                f"{first.player} must first {first.describe()} for the {first.cause.label}",
                Refusal.OWES,
                **first.owed(),
            )

    def take_stack(self, by: str, card: Cause, onto: set[Cause], *, stacking: bool) -> int:
        """With `stacking` on, `by` may answer the attack on them (not yet pressed) with `card`: the sum passes on.
        Returns what was owed (0 when nothing is stacked); refuses any other card while play is held."""
        holding = self.holding_play()
        if stacking and len(holding) == 1:
            attack = holding[0]
            # Only a card somebody played this round is answered: not a first card, not a carried attack.
            if attack.player == by and not attack.started and attack.by is not None and not attack.carried:
                if attack.cause not in onto:
                    raise GameError(
                        f"a {card.label} does not stack on a {attack.cause.label}",
                        Refusal.STACK_MISMATCH,
                        card=card.value,
                        onto=attack.cause.value,
                    )
                self.remove(attack)
                return attack.presses + attack.cards
            owed = f"{attack.player} must first {attack.describe()} for the {attack.cause.label}"
            if attack.player != by and attack.by is not None and not attack.carried:
                raise GameError(
                    f"only {attack.player}, who is hit, may stack on the {attack.cause.label}: {owed}",
                    Refusal.STACK_NOT_HIT,
                    player=attack.player,
                )
            if attack.started:
                raise GameError(
                    f"too late to stack: {attack.player} has started pressing; {owed}",
                    Refusal.STACK_TOO_LATE,
                    player=attack.player,
                )
        self.check_free()
        return 0

    def serve(self, demand: Demand, outcome_fired: bool, cards: int) -> Press:
        """A press served `demand` (one of these): one press fewer, the fire it waited for, or fewer cards owed; the
        demand closes when nothing is left of it."""
        index = self.index(demand)
        if demand.until_fire:
            left = replace(demand, started=True)
            closed = outcome_fired
        elif demand.presses:
            left = replace(demand, presses=demand.presses - 1, started=True)
            closed = left.presses == 0
        else:
            left = replace(demand, cards=max(0, demand.cards - cards), started=True)
            closed = left.cards == 0
        if closed:
            del self[index]
        else:
            self[index] = left
        return Press(demand.player, demand.cause, outcome_fired, cards, closed)
