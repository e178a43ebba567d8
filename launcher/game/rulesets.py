"""What a table plays: the ruleset (UNO Attack or classic UNO), the house rules, and the players.

Each house rule has a name and a one-line explanation in English, 简体中文 and 繁體中文 for the rule picker.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from enum import StrEnum
from typing import Any, TypeVar

from launcher.game.cards import CLASSIC, UNO_ATTACK, Deck, GameError, whole_number
from launcher.refusals import Refusal

MIN_PLAYERS = 2
MAX_PLAYERS = 10  # the most any ruleset seats: classic UNO
MAX_NAME_LENGTH = 40
LANGUAGES = ("en", "zh-Hans", "zh-Hant")


Choice = TypeVar("Choice", bound=StrEnum)


def parse_choice(choices: type[Choice], name: str, value: object) -> Choice:
    """One of a StrEnum's values, or a GameError naming the setting and what is accepted."""
    if isinstance(value, str) and value in {c.value for c in choices}:
        return choices(value)
    raise GameError(f"{name} = {value!r:.40} is not accepted; expected one of {', '.join(c.value for c in choices)}")


class FirstPlayer(StrEnum):
    """Who plays first to the card turned up; a first Skip, Hit 2 or Draw Two falls on them (docs/GAME.md)."""

    LEFT_OF_DEALER = "left_of_dealer"
    DEALER = "dealer"


class ReverseStart(StrEnum):
    """Who plays first to a Reverse turned up; play then goes to the right either way."""

    DEALER = "dealer"
    RIGHT_OF_DEALER = "right_of_dealer"


# The house rules that choose between the sources' ways, each a StrEnum; unset (None) is the ruleset's own way.
HOUSE_RULE_CHOICES: dict[str, type[StrEnum]] = {"first_player": FirstPlayer, "reverse_start": ReverseStart}


class Ruleset(StrEnum):
    UNO_ATTACK = "uno_attack"
    CLASSIC = "classic"

    @property
    def first_player(self) -> FirstPlayer:
        """Seed 000: UNO Attack starts left of the dealer (由發牌人左邊開始), classic UNO with the dealer
        (莊家根據此牌出牌). Other classic sheets start left of the dealer: the choice is a house rule."""
        return FirstPlayer.LEFT_OF_DEALER if self is Ruleset.UNO_ATTACK else FirstPlayer.DEALER

    @property
    def reverse_start(self) -> ReverseStart:
        """Seeds 000 and 003 and the UNO Attack sheet: on a Reverse turned up the dealer plays first; seeds 001 and
        002 have the player on the dealer's right start (若是"reverse"则为右边)."""
        return ReverseStart.DEALER

    @property
    def deck(self) -> Deck:
        return UNO_ATTACK if self is Ruleset.UNO_ATTACK else CLASSIC

    @property
    def label(self) -> str:
        return self.deck.label

    @property
    def max_players(self) -> int:
        """UNO Attack is sold for 2 to 9 players; classic UNO for 2 to 10."""
        return 9 if self is Ruleset.UNO_ATTACK else MAX_PLAYERS

    @classmethod
    def parse(cls, value: object) -> Ruleset:
        return parse_choice(cls, "ruleset", value)


@dataclass(frozen=True, slots=True)
class HouseNumber:
    """A house rule that is a number: its range and its default."""

    low: int
    high: int
    default: int


HOUSE_RULE_NUMBERS = {
    "party_penalty": HouseNumber(1, 10, 2),  # cards (classic) or presses (UNO Attack) per party penalty
    # A forgotten UNO, caught: 2 presses in the UNO Attack rules, 2 cards in classic UNO; some tables take 3.
    "forgot_uno_penalty": HouseNumber(1, 10, 2),
}


@dataclass(frozen=True, slots=True)
class HouseRules:
    """The house rules, all off by default (the official rules), and the house numbers at their defaults."""

    stacking: bool = False
    jump_in: bool = False
    multiple_identical: bool = False
    pairs_one_effect: bool = False
    seven_zero: bool = False
    last_card_not_action: bool = False
    last_card_not_skip_reverse_wild: bool = False
    red_zero_100: bool = False
    reshuffle_doubles: bool = False
    highest_bust_loses: bool = False
    challenger_skipped: bool = False
    number_card_starts: bool = False
    first_draw_two_dealer: bool = False
    skip_passes_draw_two: bool = False
    reverse_returns_draw_two: bool = False
    party_penalties: bool = False
    party_penalty: int = HOUSE_RULE_NUMBERS["party_penalty"].default
    forgot_uno_penalty: int = HOUSE_RULE_NUMBERS["forgot_uno_penalty"].default
    first_player: FirstPlayer | None = None  # None: the ruleset's own (settled by the game and the table)
    reverse_start: ReverseStart | None = None

    def __post_init__(self) -> None:
        for rule in fields(self):
            value = getattr(self, rule.name)
            if rule.name in HOUSE_RULE_CHOICES:
                if value is not None:
                    object.__setattr__(self, rule.name, parse_choice(HOUSE_RULE_CHOICES[rule.name], rule.name, value))
            elif rule.name in HOUSE_RULE_NUMBERS:
                number = HOUSE_RULE_NUMBERS[rule.name]
                whole_number(rule.name, value, number.low, number.high)
            elif not isinstance(value, bool):
                raise GameError(f"{rule.name} = {value!r:.40} is not accepted; expected true or false")

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> HouseRules:
        """From API or stored values; unknown rules are refused, missing ones are off."""
        if not isinstance(mapping, Mapping):
            raise GameError(f"house rules map rule names to values; got {mapping!r:.60}")
        known = [rule.name for rule in fields(cls)]
        for key in mapping:
            if key not in known:
                raise GameError(f"unknown house rule {key!r:.40}; the house rules are {', '.join(known)}")
        return cls(**mapping)

    @classmethod
    def from_stored(cls, mapping: Mapping[str, Any]) -> HouseRules:
        """As stored with a game or a table: one stored before the start was a choice started left of the dealer."""
        return cls.from_mapping({"first_player": FirstPlayer.LEFT_OF_DEALER.value, **mapping})

    def settled(self, ruleset: Ruleset) -> HouseRules:
        """The rules with each choice left unset made the ruleset's own, so a stored game keeps what it played."""
        return replace(
            self,
            first_player=self.first_player or ruleset.first_player,
            reverse_start=self.reverse_start or ruleset.reverse_start,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


OFFICIAL = HouseRules()  # no house rule


@dataclass(frozen=True, slots=True)
class HouseRuleText:
    key: str
    name: dict[str, str]  # by language: "en", "zh-Hans", "zh-Hant"
    explanation: dict[str, str]
    rulesets: frozenset[Ruleset]  # where the rule means something


_BOTH = frozenset(Ruleset)

HOUSE_RULE_TEXTS: tuple[HouseRuleText, ...] = (
    HouseRuleText(
        "stacking",
        {"en": "Stacking", "zh-Hans": "叠加", "zh-Hant": "疊加"},
        {
            "en": "A Hit 2 or Draw Two may be answered with another, passing the sum on (Hit 2 on Hit 2: the next "
            "player presses 4 times); a Wild Draw Four may go on a Draw Two, not the reverse.",
            "zh-Hans": "被罚时可以再出一张罚按牌或 +2，把惩罚累加给下家（罚按牌叠罚按牌，下家按 4 次）；"
            "+4 可以叠在 +2 上，反过来不行。",
            "zh-Hant": "被罰時可以再出一張罰按牌或 +2，把懲罰累加給下家（罰按牌疊罰按牌，下家按 4 次）；"
            "+4 可以疊在 +2 上，反過來不行。",
        },
        _BOTH,
    ),
    HouseRuleText(
        "jump_in",
        {"en": "Jump-in", "zh-Hans": "抢出", "zh-Hant": "搶出"},
        {
            "en": "A card identical in colour and number to the one just played may be played out of turn; play "
            "continues from whoever jumped in. The phones follow whoever plays and call it a jump-in; the table "
            "checks that the card was identical. Without this rule the phones name any play out of turn.",
            "zh-Hans": "手上有和刚打出的牌颜色、数字完全相同的牌时，可以不按顺序抢先打出，之后从抢出的人接着出。"
            "手机跟着出牌的人走，并标明是抢出；牌是否完全相同由大家检查。不用这条规则时，手机会指出不按顺序的出牌。",
            "zh-Hant": "手上有和剛打出的牌顏色、數字完全相同的牌時，可以不按順序搶先打出，之後從搶出的人接著出。"
            "手機跟著出牌的人走，並標明是搶出；牌是否完全相同由大家檢查。不用這條規則時，手機會指出不按順序的出牌。",
        },
        _BOTH,
    ),
    HouseRuleText(
        "multiple_identical",
        {"en": "Identical cards together", "zh-Hans": "同牌一起出", "zh-Hant": "同牌一起出"},
        {
            "en": "Identical cards may be played at once: n Skips skip n players, n Hit 2s or Draw Twos add up, "
            "an even number of Reverses keeps the direction.",
            "zh-Hans": "完全相同的牌可以一次打出：n 张禁止牌就跳过 n 个人，n 张罚按牌或 +2 累加，偶数张反转方向不变。",
            "zh-Hant": "完全相同的牌可以一次打出：n 張阻擋牌就跳過 n 個人，n 張罰按牌或 +2 累加，偶數張反轉方向不變。",
        },
        _BOTH,
    ),
    HouseRuleText(
        "pairs_one_effect",
        {"en": "Pairs, one effect", "zh-Hans": "对牌一起出", "zh-Hant": "對牌一起出"},
        {
            "en": "Two identical cards may be played together, to go out faster; the pair acts as one card (a pair "
            "of Skips skips one player, a pair of Draw Twos gives 2).",
            "zh-Hans": "两张完全相同的牌可以一起出，出得更快；"
            "一对只算一张的效果（一对禁止牌只跳过一个人，一对 +2 只罚两张）。",
            "zh-Hant": "兩張完全相同的牌可以一起出，出得更快；"
            "一對只算一張的效果（一對阻擋牌只跳過一個人，一對 +2 只罰兩張）。",
        },
        _BOTH,
    ),
    HouseRuleText(
        "seven_zero",
        {"en": "Seven-zero", "zh-Hans": "七零规则", "zh-Hant": "七零規則"},
        {
            "en": "When a 0 is played, every hand passes to the next player in the direction of play. The phones "
            "cannot see the hands: the table passes them; the turn goes on as after any card.",
            "zh-Hans": "有人打出 0 时，所有人把手牌按出牌方向传给下家。手机看不到手牌：由大家自己传牌，轮次照常往下。",
            "zh-Hant": "有人打出 0 時，所有人把手牌按出牌方向傳給下家。手機看不到手牌：由大家自己傳牌，輪次照常往下。",
        },
        frozenset({Ruleset.CLASSIC}),  # the UNO Attack deck has no zeros
    ),
    HouseRuleText(
        "last_card_not_action",
        {"en": "No action card to finish", "zh-Hans": "最后一张不能是功能牌", "zh-Hant": "最後一張不能是功能牌"},
        {
            "en": "Nobody may go out on an action or Wild card; whoever holds only such a card must draw (classic) "
            "or press (UNO Attack) instead.",
            "zh-Hans": "最后一张不能是功能牌或万能牌；只剩这种牌时，必须摸牌（经典）或按发牌机（UNO Attack）。",
            "zh-Hant": "最後一張不能是功能牌或萬用牌；只剩這種牌時，必須摸牌（經典）或按發牌機（UNO Attack）。",
        },
        _BOTH,
    ),
    HouseRuleText(
        "last_card_not_skip_reverse_wild",
        {
            "en": "No Skip, Reverse or Wild to finish",
            "zh-Hans": "最后一张不能是禁止、反转或变色",
            "zh-Hant": "最後一張不能是阻擋、反轉或變色",
        },
        {
            "en": "Nobody may go out on a Skip, a Reverse or a Wild; a Draw Two or Wild Draw Four may end the "
            "round (the next player still takes it). Holding only such a card counts as having no card to play.",
            "zh-Hans": "最后一张不能是禁止牌、反转牌或变色牌；+2、+4 可以最后出（下家照样受罚）。"
            "只剩这种牌时，算作无牌可出。",
            "zh-Hant": "最後一張不能是阻擋牌、反轉牌或變色牌；+2、+4 可以最後出（下家照樣受罰）。"
            "只剩這種牌時，算作無牌可出。",
        },
        _BOTH,
    ),
    HouseRuleText(
        "red_zero_100",
        {"en": "Red 0 = 100", "zh-Hans": "红 0 算 100 分", "zh-Hant": "紅 0 算 100 分"},
        {
            "en": "At scoring, a red 0 left in a hand is worth 100 points instead of 0.",
            "zh-Hans": "结算时，手上剩下的红色 0 算 100 分，不算 0 分。",
            "zh-Hant": "結算時，手上剩下的紅色 0 算 100 分，不算 0 分。",
        },
        frozenset({Ruleset.CLASSIC}),
    ),
    HouseRuleText(
        "reshuffle_doubles",
        {"en": "Reshuffle doubles", "zh-Hans": "洗牌加倍", "zh-Hant": "洗牌加倍"},
        {
            "en": "If the draw pile ran out and was reshuffled during a round, that round's score counts double.",
            "zh-Hans": "这一局里牌库用完、重新洗过牌的话，这一局的分数加倍。",
            "zh-Hant": "這一局裡牌庫用完、重新洗過牌的話，這一局的分數加倍。",
        },
        _BOTH,
    ),
    HouseRuleText(
        "highest_bust_loses",
        {"en": "One loser", "zh-Hans": "只有一个输家", "zh-Hant": "只有一個輸家"},
        {
            "en": "Where passing the target loses (lowest total, knock-out play): if several pass it in the same "
            "round, only the one with the highest total loses.",
            "zh-Hans": "在先到目标分就输的玩法里（低分获胜、淘汰制）：同一局有几个人一起爆分时，只算分数最高的人输。",
            "zh-Hant": "在先到目標分就輸的玩法裡（低分獲勝、淘汰制）：同一局有幾個人一起爆分時，只算分數最高的人輸。",
        },
        _BOTH,
    ),
    HouseRuleText(
        "challenger_skipped",
        {"en": "Challenger always skipped", "zh-Hans": "质疑者总被跳过", "zh-Hant": "質疑者總被跳過"},
        {
            "en": "After a Wild Draw Four is challenged, the challenger loses the turn whatever the challenge "
            "shows; the official rules let the challenger play when the Wild Draw Four was illegal.",
            "zh-Hans": "+4 被质疑后，不论质疑结果如何，质疑者都被跳过；正式规则是 +4 出得不合法时由质疑者接着出。",
            "zh-Hant": "+4 被質疑後，不論質疑結果如何，質疑者都被跳過；正式規則是 +4 出得不合法時由質疑者接著出。",
        },
        frozenset({Ruleset.CLASSIC}),
    ),
    HouseRuleText(
        "number_card_starts",
        {"en": "A number card starts", "zh-Hans": "首张须是数字牌", "zh-Hant": "首張須是數字牌"},
        {
            "en": "The card turned up to start a round must be a number card: any other goes back into the deck "
            "and the next is turned up.",
            "zh-Hans": "开局翻开的第一张牌必须是数字牌：不是的话插回牌库，再翻下一张。",
            "zh-Hant": "開局翻開的第一張牌必須是數字牌：不是的話插回牌庫，再翻下一張。",
        },
        _BOTH,
    ),
    HouseRuleText(
        "first_draw_two_dealer",
        {"en": "Dealer takes a first Draw Two", "zh-Hans": "首张 +2 由庄家罚摸", "zh-Hant": "首張 +2 由莊家罰摸"},
        {
            "en": "When the card turned up to start a round is a Draw Two, the dealer takes the 2 cards, even where "
            "the player left of the dealer plays first (who would take them and lose the turn); play starts left of "
            "the dealer.",
            "zh-Hans": "开局翻开的第一张是 +2 时，由庄家罚摸两张；即使是庄家左边的人先出（本该由他摸两张并停出一次）"
            "也一样。仍由庄家左边的人先出。",
            "zh-Hant": "開局翻開的第一張是 +2 時，由莊家罰摸兩張；即使是莊家左邊的人先出（本該由他摸兩張並停出一次）"
            "也一樣。仍由莊家左邊的人先出。",
        },
        frozenset({Ruleset.CLASSIC}),
    ),
    HouseRuleText(
        "skip_passes_draw_two",
        {"en": "Skip passes a Draw Two on", "zh-Hans": "禁止牌把 +2 转给下下家", "zh-Hant": "阻擋牌把 +2 轉給下下家"},
        {
            "en": "Whoever is hit by a Draw Two may, before taking a card, play a Skip of its colour: the next "
            "player is skipped and the one after takes the cards and loses the turn.",
            "zh-Hans": "被 +2 罚的人在摸牌前可以出一张同色的禁止牌：下家被跳过，+2 转给下下家，由他摸牌并停出一次。",
            "zh-Hant": "被 +2 罰的人在摸牌前可以出一張同色的阻擋牌：下家被跳過，+2 轉給下下家，由他摸牌並停出一次。",
        },
        frozenset({Ruleset.CLASSIC}),
    ),
    HouseRuleText(
        "reverse_returns_draw_two",
        {"en": "Reverse returns a Draw Two", "zh-Hans": "反转牌把 +2 还给上家", "zh-Hant": "反轉牌把 +2 還給上家"},
        {
            "en": "Whoever is hit by a Draw Two may, before taking a card, play a Reverse of its colour: the "
            "direction flips and the player before takes the cards and loses the turn.",
            "zh-Hans": "被 +2 罚的人在摸牌前可以出一张同色的反转牌：出牌方向反转，+2 还给上家，由他摸牌并停出一次。",
            "zh-Hant": "被 +2 罰的人在摸牌前可以出一張同色的反轉牌：出牌方向反轉，+2 還給上家，由他摸牌並停出一次。",
        },
        frozenset({Ruleset.CLASSIC}),
    ),
    HouseRuleText(
        "party_penalties",
        {"en": "Party penalties", "zh-Hans": "聚会惩罚", "zh-Hant": "聚會懲罰"},
        {
            "en": "Silence after a 6, slap the pile on a 9 or 4, five seconds per turn: whoever fails takes the set "
            "penalty, 2 cards or 2 presses unless changed.",
            "zh-Hans": "出 6 后不许出声，出 9 或 4 时抢拍弃牌堆，每次出牌限时 5 秒：犯规的人受设定的惩罚，"
            "默认摸 2 张或按 2 次。",
            "zh-Hant": "出 6 後不准出聲，出 9 或 4 時搶拍棄牌堆，每次出牌限時 5 秒：犯規的人受設定的懲罰，"
            "預設摸 2 張或按 2 次。",
        },
        _BOTH,
    ),
)


def _check_name(what: str, name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise GameError(f"a {what} name must be a non-empty text; got {name!r:.40}")
    if name != name.strip() or len(name) > MAX_NAME_LENGTH:
        raise GameError(
            f"{what} name {name!r:.50} is not accepted; expected 1 to {MAX_NAME_LENGTH} characters "
            "without spaces at either end",
            Refusal.NAME_TOO_LONG,
            max=MAX_NAME_LENGTH,
        )
    # Control characters would garble messages, logs and the page.
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        raise GameError(f"{what} name {name!r:.50} contains control characters")
    return name


def validate_names(what: str, names: Sequence[str], low: int, high: int, *, game: str = "") -> tuple[str, ...]:
    """Names for players or teams: `low` to `high` of them, each distinct (ignoring case); `game` names the game
    whose limit that is."""
    if isinstance(names, str | bytes) or not isinstance(names, Sequence):
        raise GameError(f"the {what}s must be a list of names; got {names!r:.60}")
    if not low <= len(names) <= high:
        limit = f"{game} is for" if game else "expected"
        raise GameError(
            f"{len(names)} {what}s; {limit} {low} to {high}", Refusal.PLAYER_COUNT, count=len(names), low=low, high=high
        )
    checked = tuple(_check_name(what, name) for name in names)
    seen: dict[str, str] = {}
    for name in checked:
        if name.casefold() in seen:
            raise GameError(
                f"{what} names must differ: {seen[name.casefold()]!r} and {name!r}",
                Refusal.NAMES_DIFFER,
                first=seen[name.casefold()],
                second=name,
            )
        seen[name.casefold()] = name
    return checked


def validate_players(players: Sequence[str], ruleset: Ruleset) -> tuple[str, ...]:
    """The players in seat order, clockwise: distinct names, as many as the ruleset seats."""
    return validate_names("player", players, MIN_PLAYERS, ruleset.max_players, game=ruleset.label)
