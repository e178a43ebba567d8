"""A scored game saved as JSON and read back, as the store does: what every scoring test checks survives."""

from __future__ import annotations

import json

from launcher.game.scoring import Game


def round_trip(game: Game) -> Game:
    """The game read back from its JSON: the same data and the same scoreboard."""
    data = json.loads(json.dumps(game.to_dict()))
    restored = Game.from_dict(data)
    assert restored.to_dict() == data == game.to_dict()
    assert restored.scoreboard() == game.scoreboard()
    return restored
