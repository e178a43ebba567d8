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
    OUT_OF_RANGE = "out_of_range"  # low, high: a number typed (a target, a hand's total, a house rule's count)
    NAMES_DIFFER = "names_differ"  # first, second: the same name twice
    PLAYER_COUNT = "player_count"  # count, low, high
    FAULT = "fault"  # the launcher stopped to be safe; the admin resets it
    LID_OPEN = "lid_open"
    BUSY = "busy"  # the launcher is still firing
    UNDO_TOO_LATE = "undo_too_late"  # a press came after the declaration: cancel or correct instead
    NOTHING_TO_UNDO = "nothing_to_undo"  # no declaration since the round began, or it was undone already
    NOT_YOUR_PRESS = "not_your_press"  # asked: whom the table asks instead, or null
    # A round's hands and its card, as the round entry sends them (launcher/game/cards.py, entries.py, history.py).
    OVER_DECK = "over_deck"  # card, count, max, held: [[player, count], …] (empty for a hand without a player)
    POINTS_OVER_DECK = "points_over_deck"  # the hands hold more points than the whole deck
    RED_ZERO_NOT_HELD = "red_zero_not_held"  # player: said to hold the red 0, with no 0 among their cards
    HAND_MISSING = "hand_missing"  # players: still in the game, with no hand
    ELIMINATED = "eliminated"  # side, round: out of the game since that round
    LAST_CARD_NEEDED = "last_card_needed"  # player: the house rule needs the card they went out on
    NO_FINISH_ON = "no_finish_on"  # player, card: nobody goes out on that card (Trade Hands, or the house rule)
    # Declarations (launcher/game/plays.py, table_core.py, open_demands.py, launcher/table/game_requests.py).
    FIRST_CARD_BACK = "first_card_back"  # card: it goes back into the deck, another is turned up
    FIRST_CARD_LATE = "first_card_late"  # the round is under way
    NOTHING_TO_CHALLENGE = "nothing_to_challenge"  # player: owes no Wild Draw Four
    CHALLENGE_CLOSED = "challenge_closed"  # the Wild Draw Four was stacked on, or carried from a scored round
    STACK_MISMATCH = "stack_mismatch"  # card, onto: that card does not stack on that attack
    # A new game's settings (launcher/game/scoring.py).
    ELIMINATION_NEEDS_THREE = "elimination_needs_three"  # elimination with 2 players or teams
    KNOCK_OUT_TEAMS = "knock_out_teams"  # knock-out play with teams
    # A phone's contribution to a shuffle (launcher/fairplay/shuffles.py), each with `shuffle`, the number it was sent
    # for.
    CONTRIBUTIONS_CLOSED = "contributions_closed"  # its first press fixed it
    CONTRIBUTIONS_FULL = "contributions_full"  # max: it has the most it takes
    ALREADY_CONTRIBUTED = "already_contributed"  # from this session
    REVEAL_EARLY = "reveal_early"  # its commitments are still open: bytes are revealed once they close
    REVEALS_CLOSED = "reveals_closed"  # its key was fixed without these bytes: their commitment counts alone
    REVEAL_MISMATCH = "reveal_mismatch"  # these bytes' SHA-256 is none of its commitments
    SHUFFLE_SEALING = "shuffle_sealing"  # a press while the phones reveal their bytes: pressed again in a moment
    SHUFFLE_OVER = "shuffle_over"  # playing: the number of the shuffle in play
    SHUFFLE_NOT_STARTED = "shuffle_not_started"  # sent as `reason` beside the code `not_found`
    TOO_MANY_GAMES = "too_many_games"  # retry_after_s: more new games a minute than [limits] allows one phone
    TOO_MANY_DECLARATIONS = "too_many_declarations"  # retry_after_s: declarations and rounds, the same
    TOO_MANY_JOINS = "too_many_joins"  # retry_after_s: joins from one address, the same
    TOO_MANY_LET_INS = "too_many_let_ins"  # retry_after_s: codes typed to let a phone in, per session and address
    TOO_MANY_SHUFFLES = "too_many_shuffles"  # retry_after_s: new shuffles, the same
    TOO_MANY_RELOADS = "too_many_reloads"  # retry_after_s: hopper reloads, the same
    TOO_MANY_PRESSES = "too_many_presses"  # retry_after_s: presses from a phone, the same
    STORE_FULL = "store_full"  # the store reached [limits] store_mb: nothing more is kept
    DISK_FULL = "disk_full"  # (507) the disk holding the store is full: the change was not kept
    DISK_READ_ONLY = "disk_read_only"  # (507) the disk holding the store turned read-only: the same
    STORE_FAILED = "store_failed"  # (507) the store could not be written for another reason (its log says which)
