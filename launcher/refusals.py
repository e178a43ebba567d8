"""The refusals a player can meet, each by a stable code the page words in the player's language.

The daemon's English message stays for logs and the CLI; the API sends the code and its parameters beside it
(docs/API.md). Every code here has words in each of the page's catalogues (tests/test_refusal_words.py).
"""

from enum import StrEnum


class Refusal(StrEnum):
    OWES = "owes"  # player, card, and presses, cards or until_fire: what they must do first
    WENT_OUT = "went_out"  # player: out of the round in play
    LAST_TWO = "last_two"  # player: only two are left, score the round
    NO_GAME = "no_game"  # there is no game yet
    GAME_OVER = "game_over"  # the game is over: start a new one
    NO_ROUND_TO_UNDO = "no_round_to_undo"
    WINNER_HOLDS_CARDS = "winner_holds_cards"  # player: the round's winner was given cards
    STACK_NOT_HIT = "stack_not_hit"  # player: only they, who are hit, may stack
    STACK_TOO_LATE = "stack_too_late"  # player: they started pressing
    CHALLENGE_TOO_LATE = "challenge_too_late"  # player: they already took the cards
    UNO_TOO_LATE = "uno_too_late"  # player: a forgotten UNO is caught only before the next player plays
    NAME_TOO_LONG = "name_too_long"  # name, max
    NAMES_DIFFER = "names_differ"  # first, second: the same name twice
    PLAYER_COUNT = "player_count"  # count, low, high
    FAULT = "fault"  # the launcher stopped to be safe; the admin resets it
    LID_OPEN = "lid_open"
    BUSY = "busy"  # the launcher is still firing
    UNDO_TOO_LATE = "undo_too_late"  # a press came after the declaration: cancel or correct instead
    NOTHING_TO_UNDO = "nothing_to_undo"  # no declaration since the round began, or it was undone already
    # A phone's contribution to a shuffle (launcher/shuffles.py), each with `shuffle`, the number it was sent for.
    CONTRIBUTIONS_CLOSED = "contributions_closed"  # its first press fixed it
    CONTRIBUTIONS_FULL = "contributions_full"  # max: it has the most it takes
    ALREADY_CONTRIBUTED = "already_contributed"  # from this session
    SHUFFLE_OVER = "shuffle_over"  # playing: the number of the shuffle in play
    SHUFFLE_NOT_STARTED = "shuffle_not_started"  # sent as `reason` beside the code `not_found`
