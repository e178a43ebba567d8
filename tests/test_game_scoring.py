"""Scoring: every mode and house option, ties, elimination to the final, teams, undo and edit, checks, statistics."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.game.cards import UNO_ATTACK, GameError
from launcher.game.rulesets import HouseRules, Ruleset
from launcher.game.scoring import Game, Mode, PlayerStats, RoundEntry
from tests.saved_game import round_trip

THREE = ["Ann", "Bob", "Cy"]
FOUR = ["Ann", "Bob", "Cy", "Dee"]


# --- winner collects -----------------------------------------------------------------------------------------------


def test_winner_collects_the_other_hands_until_the_target():
    game = Game(THREE, Mode.WINNER_COLLECTS, 100)
    first = game.score_round("Ann", {"Bob": {"hit_2": 1, "5": 1}, "Cy": 40})
    assert (first.values, first.points) == ({"Bob": 25, "Cy": 40}, {"Ann": 65, "Bob": 0, "Cy": 0})
    game.score_round("Bob", {"Ann": 10, "Cy": {"wild_hit_fire": 1}})
    assert game.totals == {"Ann": 65, "Bob": 60, "Cy": 0} and not game.over
    game.score_round("Ann", {"Bob": 15, "Cy": 20})
    assert game.totals["Ann"] == 100 and game.over and game.winners == ("Ann",)
    with pytest.raises(GameError, match=r"round 4: the game is already over \(Ann won\)"):
        game.score_round("Bob", {"Ann": 5, "Cy": 5})
    round_trip(game)


# --- lowest total --------------------------------------------------------------------------------------------------


def test_lowest_total_each_adds_their_own_hand_and_the_lowest_wins_at_the_target():
    game = Game(THREE, "lowest_total", 100)
    game.score_round("Ann", {"Bob": {"wild": 1}, "Cy": {"3": 2}})
    assert game.totals == {"Ann": 0, "Bob": 50, "Cy": 6}
    game.score_round("Cy", {"Ann": 30, "Bob": {"skip": 1, "reverse": 2}})
    assert game.totals == {"Ann": 30, "Bob": 110, "Cy": 6}
    assert game.over and game.winners == ("Cy",)


def test_lowest_total_ties_share_the_win():
    game = Game(THREE, Mode.LOWEST_TOTAL, 50)
    game.score_round("Ann", {"Bob": 20, "Cy": 30})
    assert not game.over
    game.score_round("Bob", {"Ann": 20, "Cy": 30})
    assert game.over and game.winners == ("Ann", "Bob")
    assert game.scoreboard()["winners"] == ["Ann", "Bob"]


# --- challenge / elimination ---------------------------------------------------------------------------------------


def test_elimination_down_to_the_head_to_head_final():
    game = Game(FOUR, Mode.ELIMINATION, 100, final="next_round")
    game.score_round("Ann", {"Bob": 40, "Cy": 10, "Dee": 120})
    assert game.eliminated == {"Dee": 0} and game.active_players == ("Ann", "Bob", "Cy")
    assert game.rounds[0].eliminated == ("Dee",)
    with pytest.raises(GameError, match="round 2: Dee was eliminated in round 1"):
        game.score_round("Bob", {"Ann": 5, "Cy": 5, "Dee": 5})
    with pytest.raises(GameError, match="round 2: Dee was eliminated in round 1"):
        game.score_round("Dee", {"Ann": 5, "Bob": 5, "Cy": 5})
    with pytest.raises(GameError, match="round 2: no hand for Cy"):
        game.score_round("Bob", {"Ann": 5})
    game.score_round("Cy", {"Ann": 20, "Bob": 70})
    assert game.eliminated == {"Dee": 0, "Bob": 1}
    assert game.final and not game.over and game.active_sides == ("Ann", "Cy")
    final = game.score_round("Cy", {"Ann": 5})  # Cy trails on points but wins the final
    assert game.totals == {"Ann": 25, "Bob": 110, "Cy": 10, "Dee": 120}
    assert final.eliminated == () and game.over and game.winners == ("Cy",) and not game.final
    round_trip(game)


def test_elimination_of_two_at_once_leaves_the_last_player_standing():
    game = Game(FOUR, Mode.ELIMINATION, 100, final="next_round")
    game.score_round("Ann", {"Bob": 100, "Cy": 150, "Dee": 30})
    assert game.eliminated == {"Bob": 0, "Cy": 0} and game.final
    game.score_round("Dee", {"Ann": 0})
    assert game.winners == ("Dee",)
    game.undo_last()
    game.score_round("Ann", {"Dee": 99})
    assert game.winners == ("Ann",)


def test_elimination_needs_three_sides():
    with pytest.raises(GameError, match="elimination needs at least 3 players or teams"):
        Game(["Ann", "Bob"], Mode.ELIMINATION)
    with pytest.raises(GameError, match="elimination needs at least 3"):
        Game(FOUR, Mode.ELIMINATION, teams={"Red": ["Ann", "Cy"], "Blue": ["Bob", "Dee"]})


# --- teams ---------------------------------------------------------------------------------------------------------

TEAMS = {"Red": ["Ann", "Cy"], "Blue": ["Bob", "Dee"]}


def test_teams_sum_their_hands_under_lowest_total():
    game = Game(FOUR, Mode.LOWEST_TOTAL, 200, TEAMS)
    assert game.sides == ("Red", "Blue")
    result = game.score_round("Ann", {"Bob": 30, "Cy": {"wild": 1}, "Dee": {"7": 1}})
    assert result.points == {"Red": 50, "Blue": 37}
    game.score_round("Dee", {"Ann": 100, "Bob": 80, "Cy": 60})
    assert game.totals == {"Red": 210, "Blue": 117}
    assert game.winners == ("Blue",)
    stats = game.statistics()
    assert stats["Ann"].rounds_won == 1 and stats["Cy"].hand_points == 110
    round_trip(game)


def test_teams_under_winner_collects_gain_the_other_teams_hands():
    game = Game(FOUR, Mode.WINNER_COLLECTS, 100, TEAMS)
    result = game.score_round("Bob", {"Ann": 30, "Cy": 25, "Dee": 40})  # the partner's 40 is not collected
    assert result.points == {"Red": 0, "Blue": 55}
    game.score_round("Dee", {"Ann": 45, "Bob": 10, "Cy": 0})
    assert game.over and game.winners == ("Blue",) and game.totals == {"Red": 0, "Blue": 100}


def test_teams_in_elimination_leave_together_and_all_crossing_at_once_goes_to_the_lowest():
    six = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"]
    teams = {"Red": ["Ann", "Dee"], "Blue": ["Bob", "Eve"], "Gold": ["Cy", "Fay"]}
    game = Game(six, Mode.ELIMINATION, 100, teams, final="next_round")
    game.score_round("Ann", {"Bob": 60, "Cy": 20, "Dee": 30, "Eve": 50, "Fay": 10})
    assert game.eliminated == {"Blue": 0} and game.active_players == ("Ann", "Cy", "Dee", "Fay") and game.final
    game.undo_last()
    game.score_round("Ann", {"Bob": 60, "Cy": 60, "Dee": 120, "Eve": 50, "Fay": 50})
    assert game.eliminated == {"Red": 0, "Blue": 0, "Gold": 0}
    assert game.totals == {"Red": 120, "Blue": 110, "Gold": 110}
    assert game.winners == ("Blue", "Gold")  # the lowest of those crossing; ties share


@pytest.mark.parametrize(
    ("teams", "message"),
    [
        ({"Red": ["Ann", "Bob"], "Blue": ["Cy", "Dee"]}, "Ann and Bob are partners"),
        ({"Red": ["Ann", "Cy"], "Blue": ["Bob"]}, "team Blue must list 2 or more players"),
        ({"Red": ["Ann", "Cy"], "Blue": ["Bob", "Zed"]}, "unknown player 'Zed'"),
        ({"Red": ["Ann", "Cy"], "Blue": ["Bob", "Cy"]}, "Cy is in two teams: Red and Blue"),
        ({"Red": ["Ann", "Cy"], "Blue": ["Bob", "Ann"]}, "Ann is in two teams"),
        ({"Red": ["Ann", "Cy", "Bob", "Dee"]}, "1 teams; expected 2 to 5"),
        ({"Red": ["Ann", "Cy"]}, "1 teams"),
        (["Ann", "Cy"], "teams map each team name to its players"),
    ],
)
def test_bad_teams_are_refused(teams, message):
    with pytest.raises(GameError, match=message):
        Game(FOUR, Mode.LOWEST_TOTAL, 500, teams)


def test_unseated_partners_get_a_seating_hint():
    with pytest.raises(GameError) as caught:
        Game(FOUR, Mode.LOWEST_TOTAL, 500, {"Red": ["Ann", "Bob"], "Blue": ["Cy", "Dee"]})
    assert str(caught.value) == (
        "Ann and Bob are partners (team Red) but sit side by side; partners alternate seats, e.g. Ann, Cy, Bob, Dee"
    )
    with pytest.raises(GameError, match=r"teams of these sizes cannot alternate"):
        Game([*FOUR, "Eve"], Mode.LOWEST_TOTAL, 500, {"Red": ["Ann", "Cy", "Eve"], "Blue": ["Bob", "Dee"]})
    with pytest.raises(GameError, match="Eve in no team"):
        Game([*FOUR, "Eve"], Mode.LOWEST_TOTAL, 500, TEAMS)


# --- house options -------------------------------------------------------------------------------------------------


def test_red_zero_counts_100_with_the_house_rule():
    rules = HouseRules(red_zero_100=True)
    game = Game(THREE, Mode.WINNER_COLLECTS, 500, ruleset=Ruleset.CLASSIC, house_rules=rules)
    result = game.score_round("Ann", {"Bob": {"0": 2, "4": 1}, "Cy": {"0": 1}}, red_zero="Bob")
    assert result.values == {"Bob": 104, "Cy": 0} and game.totals["Ann"] == 104
    plain = Game(THREE, Mode.WINNER_COLLECTS, 500, ruleset=Ruleset.CLASSIC)
    plain.score_round("Ann", {"Bob": {"0": 2, "4": 1}, "Cy": {"0": 1}}, red_zero="Bob")
    assert plain.totals["Ann"] == 4
    with pytest.raises(GameError, match="Cy holds the red 0, so Cy's cards must include a 0"):
        game.score_round("Ann", {"Bob": {"4": 1}, "Cy": {"5": 1}}, red_zero="Cy")
    with pytest.raises(GameError, match="Cy holds the red 0"):
        game.score_round("Ann", {"Bob": 4, "Cy": 100}, red_zero="Cy")  # a typed total already includes it
    with pytest.raises(GameError, match="the UNO Attack deck has no red 0"):
        Game(THREE, Mode.LOWEST_TOTAL).score_round("Ann", {"Bob": 4, "Cy": 5}, red_zero="Cy")
    round_trip(game)


def test_reshuffled_round_doubles_with_the_house_rule():
    hands = {"Bob": 30, "Cy": {"wild_all_hit": 1}}
    doubling = Game(THREE, Mode.LOWEST_TOTAL, house_rules=HouseRules(reshuffle_doubles=True))
    assert doubling.score_round("Ann", hands, reshuffled=True).points == {"Ann": 0, "Bob": 60, "Cy": 100}
    assert doubling.score_round("Ann", hands).points == {"Ann": 0, "Bob": 30, "Cy": 50}
    collecting = Game(THREE, Mode.WINNER_COLLECTS, house_rules=HouseRules(reshuffle_doubles=True))
    assert collecting.score_round("Ann", hands, True).points == {"Ann": 160, "Bob": 0, "Cy": 0}
    plain = Game(THREE, Mode.LOWEST_TOTAL)
    assert plain.score_round("Ann", hands, reshuffled=True).points == {"Ann": 0, "Bob": 30, "Cy": 50}
    assert plain.rounds[0].entry.reshuffled  # recorded, though it changes nothing


def test_target_is_any_positive_whole_number():
    assert Game(THREE, Mode.LOWEST_TOTAL, 1).target == 1
    for target in (0, -100, 2.5, "500", True):
        with pytest.raises(GameError, match=r"target = .* is not accepted"):
            Game(THREE, Mode.LOWEST_TOTAL, target)
    with pytest.raises(GameError, match="mode = 'teams' is not accepted"):
        Game(THREE, "teams")


def test_a_game_of_uno_attack_is_for_2_to_9_players():
    ten = [f"P{i}" for i in range(10)]
    with pytest.raises(GameError, match="10 players; UNO Attack is for 2 to 9"):
        Game(ten, Mode.LOWEST_TOTAL, ruleset=Ruleset.UNO_ATTACK)
    assert Game(ten, Mode.LOWEST_TOTAL, ruleset=Ruleset.CLASSIC).players == tuple(ten)
    assert len(Game(ten[:9], Mode.LOWEST_TOTAL).players) == 9


# --- undo and edit -------------------------------------------------------------------------------------------------


def three_rounds() -> Game:
    game = Game(THREE, Mode.LOWEST_TOTAL, 300)
    game.score_round("Ann", {"Bob": 10, "Cy": 20})
    game.score_round("Bob", {"Ann": 30, "Cy": 40})
    game.score_round("Cy", {"Ann": 50, "Bob": 60})
    return game


def test_undo_removes_the_last_round_and_its_points():
    game = three_rounds()
    removed = game.undo_last()
    assert removed == RoundEntry("Cy", {"Ann": 50, "Bob": 60})
    assert game.totals == {"Ann": 30, "Bob": 10, "Cy": 60} and len(game.rounds) == 2
    game.undo_last()
    game.undo_last()
    with pytest.raises(GameError, match="there is no round to undo"):
        game.undo_last()
    assert game.totals == {"Ann": 0, "Bob": 0, "Cy": 0}


def test_editing_a_middle_round_recomputes_every_total_after_it():
    game = three_rounds()
    edited = game.edit_round(1, "Ann", {"Bob": 5, "Cy": 5})
    assert edited.totals == {"Ann": 0, "Bob": 15, "Cy": 25}
    assert [r.totals for r in game.rounds][2] == {"Ann": 50, "Bob": 75, "Cy": 25}
    assert game.statistics()["Ann"].rounds_won == 2 and game.statistics()["Bob"].rounds_won == 0


def test_an_edit_that_ends_the_game_early_is_refused_whole():
    game = three_rounds()
    before = game.to_dict()
    with pytest.raises(GameError, match=r"round 3: the game is already over \(Ann won\)"):
        game.edit_round(1, "Ann", {"Bob": 300, "Cy": 5})
    assert game.to_dict() == before


def test_an_edit_that_eliminates_someone_who_plays_later_is_refused_whole():
    game = Game(FOUR, Mode.ELIMINATION, 100)
    game.score_round("Ann", {"Bob": 10, "Cy": 10, "Dee": 10})
    game.score_round("Dee", {"Ann": 10, "Bob": 10, "Cy": 10})
    before = game.to_dict()
    with pytest.raises(GameError, match="round 2: Dee was eliminated in round 1"):
        game.edit_round(0, "Ann", {"Bob": 10, "Cy": 10, "Dee": 200})
    assert game.to_dict() == before


def test_undo_after_game_over_reopens_the_game():
    game = Game(THREE, Mode.WINNER_COLLECTS, 50)
    game.score_round("Ann", {"Bob": 30, "Cy": 30})
    assert game.over
    game.undo_last()
    assert not game.over and game.winners == ()


def test_the_last_rounds_winner_deals_the_next_round_whatever_was_undone_or_corrected():
    game = Game(FOUR, Mode.LOWEST_TOTAL, dealer="Cy")
    assert game.dealer == "Cy"
    game.score_round("Bob", {"Ann": 1, "Cy": 1, "Dee": 1})
    assert game.dealer == "Bob"
    game.edit_round(0, "Dee", {"Ann": 1, "Bob": 1, "Cy": 1})
    assert game.dealer == "Dee" and round_trip(game).dealer == "Dee"
    game.undo_last()
    assert game.dealer == "Cy" and round_trip(game).dealer == "Cy"
    with pytest.raises(GameError, match="unknown player 'Zed'"):
        Game(FOUR, Mode.LOWEST_TOTAL, dealer="Zed")


def test_a_winner_whose_team_went_out_passes_the_deal_to_the_next_player_still_in():
    teams = {"Red": ["Ann", "Dee"], "Blue": ["Bob", "Eve"], "Green": ["Cy", "Fay"]}
    game = Game(["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"], Mode.ELIMINATION, 100, teams)
    game.score_round("Ann", {"Bob": 1, "Cy": 1, "Dee": 150, "Eve": 1, "Fay": 1})  # Dee's hand puts Red out
    assert game.eliminated == {"Red": 0}
    assert game.dealer == "Bob"


def test_edit_index_is_checked():
    with pytest.raises(GameError, match="there is no round to edit"):
        Game(THREE, Mode.LOWEST_TOTAL).edit_round(0, "Ann", {"Bob": 1, "Cy": 1})
    with pytest.raises(GameError, match="round index = 3 is not accepted; expected a whole number from 0 to 2"):
        three_rounds().edit_round(3, "Ann", {"Bob": 1, "Cy": 1})


# --- bad round entries ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("winner", "hands", "message"),
    [
        ("Zed", {"Bob": 1, "Cy": 1}, "unknown player 'Zed'; the players are Ann, Bob, Cy"),
        ("Ann", {"Bob": 1, "Zed": 1}, "unknown player 'Zed'"),
        ("Ann", {"Bob": 1, "<script>" * 500: 1}, "unknown player '<script><script><scrip"),
        ("Ann", {"Bob": {"7": -1}, "Cy": 1}, "Bob: -1 × number 7: a count cannot be negative"),
        ("Ann", {"Bob": -5, "Cy": 1}, "Bob's hand total = -5 is not accepted"),
        (
            "Ann",
            {"Bob": 1481, "Cy": 1},
            "Bob's hand total = 1481 is not accepted; expected a whole number from 0 to 1480",
        ),
        ("Ann", {"Bob": {"wild_all_hit": 3}, "Cy": 1}, "Bob: 3 × Wild All Hit, but the UNO Attack deck has only 2"),
        (
            "Ann",
            {"Bob": {"wild_all_hit": 2}, "Cy": {"wild_all_hit": 1}},
            "3 × Wild All Hit across the hands (Bob 2, Cy 1), but the UNO Attack deck has only 2",
        ),
        ("Ann", {"Bob": 1000, "Cy": 1000}, "the hands add up to more points than the whole UNO Attack deck holds"),
        ("Ann", {"Bob": "25", "Cy": 1}, "Bob: a hand maps card kinds to counts"),
        ("Ann", {"Bob": 2.5, "Cy": 1}, "Bob: a hand maps card kinds to counts"),
        ("Ann", {"Bob": {"7": "2"}, "Cy": 1}, "Bob: the count of number 7 must be a whole number, not '2'"),
        ("Ann", [("Bob", 1)], "the hands map each player to a hand"),
        ("Ann", {"Ann": {"7": 1}, "Bob": 1, "Cy": 1}, "Ann won the round, so Ann's hand must be empty"),
        ("Ann", {"Ann": 5, "Bob": 1, "Cy": 1}, "Ann won the round, so Ann's hand must be empty"),
        ("Ann", {"Bob": 1}, "round 1: no hand for Cy; every player still in the game needs one"),
        (None, {"Bob": 1, "Cy": 1}, "unknown player None"),
    ],
)
def test_bad_rounds_are_refused_with_a_clear_message_and_nothing_stored(winner, hands, message):
    game = Game(THREE, Mode.LOWEST_TOTAL)
    with pytest.raises(GameError) as caught:
        game.score_round(winner, hands)
    assert str(caught.value).startswith(message)
    assert len(str(caught.value)) < 400
    assert game.rounds == () and game.totals == {"Ann": 0, "Bob": 0, "Cy": 0}


def test_the_winners_empty_hand_may_be_given():
    game = Game(THREE, Mode.LOWEST_TOTAL)
    game.score_round("Ann", {"Ann": {}, "Bob": 0, "Cy": {"7": 0}})
    assert game.rounds[0].entry.hands == {"Bob": 0, "Cy": {}}


def test_reshuffled_must_be_true_or_false():
    with pytest.raises(GameError, match="reshuffled = 'no' is not accepted"):
        Game(THREE, Mode.LOWEST_TOTAL).score_round("Ann", {"Bob": 1, "Cy": 1}, "no")


# --- statistics ----------------------------------------------------------------------------------------------------


def test_statistics_count_rounds_presses_fires_and_cards():
    game = three_rounds()
    for player, cards in [("Bob", 0), ("Bob", 3), ("Cy", 0), ("Bob", 1)]:
        game.record_press(player, cards)
    stats = game.statistics()
    assert stats["Bob"] == PlayerStats(rounds_won=1, hand_points=70, presses=3, fires=2, cards=4)
    assert stats["Cy"] == PlayerStats(rounds_won=1, hand_points=60, presses=1, fires=0, cards=0)
    with pytest.raises(GameError, match="unknown player 'Zed'"):
        game.record_press("Zed", 1)
    with pytest.raises(GameError, match="cards = -1 is not accepted"):
        game.record_press("Bob", -1)
    game.undo_last()  # presses are not part of a round
    assert game.statistics()["Bob"].presses == 3
    restored = round_trip(game)
    assert restored.statistics() == game.statistics()


# --- persistence ---------------------------------------------------------------------------------------------------


def test_a_stored_game_is_checked():
    data = three_rounds().to_dict()
    with pytest.raises(GameError, match=r"a game: missing \['launcher'\]"):
        Game.from_dict({k: v for k, v in data.items() if k != "launcher"})
    bad_round = {**data["rounds"][0], "hands": {"Bob": -1, "Cy": 1}}
    with pytest.raises(GameError, match="Bob's hand total = -1"):
        Game.from_dict({**data, "rounds": [bad_round]})
    with pytest.raises(GameError, match=r"round 1: missing \['red_zero'\]"):
        Game.from_dict({**data, "rounds": [{k: v for k, v in data["rounds"][0].items() if k != "red_zero"}]})
    with pytest.raises(GameError, match="fires = 5 is not accepted"):
        launcher = {**data["launcher"], "Ann": {"presses": 1, "fires": 5, "cards": 5}}
        Game.from_dict({**data, "launcher": launcher})


# --- properties ----------------------------------------------------------------------------------------------------

CARDS = [kind.id for kind in UNO_ATTACK.kinds for _ in range(kind.count)]
POINTS = {kind.id: kind.points for kind in UNO_ATTACK.kinds}


@st.composite
def rounds(draw):
    winner = draw(st.sampled_from(FOUR))
    others = [p for p in FOUR if p != winner]
    picks = draw(st.lists(st.integers(0, len(CARDS) - 1), unique=True, max_size=12))
    hands: dict[str, dict[str, int] | int] = {p: {} for p in others}
    for n, card in enumerate(picks):
        hand = hands[others[n % 3]]
        hand[CARDS[card]] = hand.get(CARDS[card], 0) + 1
    for player in others:
        if draw(st.booleans()):
            hands[player] = draw(st.integers(0, 100))  # a typed total
    return winner, hands, draw(st.booleans())


def value(hand) -> int:
    return hand if isinstance(hand, int) else sum(POINTS[k] * n for k, n in hand.items())


def expected_totals(mode: Mode, played, doubling: bool) -> dict[str, int]:
    totals = dict.fromkeys(FOUR, 0)
    for winner, hands, reshuffled in played:
        factor = 2 if doubling and reshuffled else 1
        if mode is Mode.WINNER_COLLECTS:
            totals[winner] += factor * sum(value(h) for h in hands.values())
        else:
            for player, hand in hands.items():
                totals[player] += factor * value(hand)
    return totals


OPERATIONS = st.one_of(
    st.tuples(st.just("score"), rounds()),
    st.tuples(st.just("undo"), st.none()),
    st.tuples(st.just("edit"), st.tuples(st.integers(0, 20), rounds())),
)


@settings(max_examples=120, deadline=None)
@given(
    mode=st.sampled_from([Mode.WINNER_COLLECTS, Mode.LOWEST_TOTAL]),
    doubling=st.booleans(),
    ops=st.lists(OPERATIONS, max_size=15),
)
def test_totals_always_equal_the_replay_of_the_rounds(mode, doubling, ops):
    game = Game(FOUR, mode, 100_000, house_rules=HouseRules(reshuffle_doubles=doubling))
    played = []
    for name, arg in ops:
        if name == "score":
            game.score_round(*arg)
            played.append(arg)
        elif name == "undo" and played:
            game.undo_last()
            played.pop()
        elif name == "edit" and played:
            index, entry = arg[0] % len(played), arg[1]
            game.edit_round(index, *entry)
            played[index] = entry
        assert game.totals == expected_totals(mode, played, doubling)
        assert [r.totals for r in game.rounds][-1:] == ([game.totals] if played else [])
    fresh = Game(FOUR, mode, 100_000, house_rules=HouseRules(reshuffle_doubles=doubling))
    for entry in played:
        fresh.score_round(*entry)
    assert fresh.scoreboard() == round_trip(game).scoreboard()


@settings(max_examples=80, deadline=None)
@given(ops=st.lists(OPERATIONS, max_size=12))
def test_elimination_changes_are_all_or_nothing(ops):
    game = Game(FOUR, Mode.ELIMINATION, 150)
    for name, arg in ops:
        before = game.to_dict()
        try:
            if name == "score":
                game.score_round(*arg)
            elif name == "undo":
                game.undo_last()
            else:
                game.edit_round(arg[0] % max(1, len(game.rounds)), *arg[1])
        except GameError:
            assert game.to_dict() == before
        replayed = round_trip(game)
        assert replayed.eliminated == game.eliminated and replayed.winners == game.winners
        assert len(game.winners) <= 1 and len(game.active_sides) >= 1


def test_the_scores_a_press_sends_follow_every_change_of_the_rounds():
    """A press's event carries the rounds won and hand points kept as rounds are scored: after scoring, an edit,
    an undo and a reload they are what the rounds themselves add up to (docs/GAME.md's statistics)."""
    game = three_rounds()
    game.edit_round(1, "Ann", {"Bob": 5, "Cy": 5})  # Bob's win becomes Ann's; Ann's 30 points are gone
    game.undo_last()  # Cy's win and Ann's 50, Bob's 60 with it
    game.score_round("Bob", {"Ann": 7, "Cy": 1})
    expected = {
        "Ann": {"rounds_won": 2, "hand_points": 7},
        "Bob": {"rounds_won": 1, "hand_points": 15},
        "Cy": {"rounds_won": 0, "hand_points": 26},
    }
    for shown in (game.scores(), round_trip(game).scores()):
        assert {p: {k: s[k] for k in ("rounds_won", "hand_points")} for p, s in shown["statistics"].items()} == expected
