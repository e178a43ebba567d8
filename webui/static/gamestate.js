// What the game's modules (game.js, score.js, setup.js, history.js) share: the game from the daemon, small DOM
// helpers and the names of rules things. game.js imports score.js and setup.js, so they reach its redraws through
// `view`, which game.js fills when it loads: no module imports one that imports it.
import { $, ui, t } from "./core.js";

const CONFIRM_MS = 4000; // a second tap within this time confirms (undo, a new game over one in play)
export const CARD = "🃏\uFE0F"; // the playing card as an emoji, not as a text glyph

export const game = {
  data: null, // GET /api/game's "game": the current game, or null
  rules: null, // GET /api/game's "rules": rulesets, decks, scoring options, house rules, declarations
  tab: null, // the tab shown
  me: null, // the player this phone belongs to ("I am …") in the current game, or null
  mePicked: undefined, // what was picked on this page (a name, or null); undefined: what the phone remembers
  watching: false, // this phone chose "Just watching": it is not asked who it is
  alerted: null, // the demand this phone last vibrated for
  loading: null, // the GET /api/game in flight
  again: false, // read once more when it answers: something changed meanwhile
  shape: "", // the players and rules the table controls were built for
  current: undefined, // whose turn the "who" picker last followed
  sending: false, // a declaration is in flight
};

// game.js's own: show a whole game (GET /api/game or an answer), show a tab, redraw the game.
export const view = {
  show: () => {},
  tab: () => {},
  render: () => {},
};

// ---- Small helpers ----

export function el(tag, className = "", text = "") {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== "") node.textContent = text;
  return node;
}

// A table's head and body: `heads` over `rows`, the cells of column `name` heading their rows. Every other cell
// carries its column's name too (data-label), for a narrow phone that shows each row as a card (app.css).
export function tableParts(heads, rows, name = 0) {
  const headRow = el("tr");
  for (const text of heads) {
    const cell = el("th", "", text);
    cell.scope = "col";
    headRow.append(cell);
  }
  const head = el("thead");
  head.append(headRow);
  const body = el("tbody");
  for (const cells of rows) {
    const tr = el("tr");
    cells.forEach((value, i) => {
      const cell = el(i === name ? "th" : "td", "", String(value ?? "—"));
      if (i === name) cell.scope = "row";
      else cell.dataset.label = heads[i];
      tr.append(cell);
    });
    body.append(tr);
  }
  return [head, body];
}

export function option(value, text) {
  const node = el("option", "", text);
  node.value = value;
  return node;
}

// "Ann, Bob and Cy" in the reader's language.
export function names(list) {
  try {
    return new Intl.ListFormat(ui.lang, { type: "conjunction" }).format(list);
  } catch {
    return list.join(", ");
  }
}

export function number(value) {
  return new Intl.NumberFormat(ui.lang).format(value);
}

export function showError(id, text) {
  $(id).textContent = text || "";
  $(id).hidden = !text;
}

// A button that asks for a second tap before it acts: the first tap turns it into its confirm text.
export function confirmTap(button, confirmText, action) {
  if (button.dataset.confirm === "true") {
    delete button.dataset.confirm;
    clearTimeout(button.confirmTimer);
    action();
    return;
  }
  button.dataset.confirm = "true";
  button.textContent = confirmText;
  button.confirmTimer = setTimeout(() => {
    delete button.dataset.confirm;
    view.render();
  }, CONFIRM_MS);
}

// ---- Names of rules things. Literal keys, so that tests/test_i18n.py can check them ----

const KIND_TEXTS = {
  skip: () => t("kind.skip"),
  reverse: () => t("kind.reverse"),
  draw_two: () => t("kind.draw_two"),
  wild: () => t("kind.wild"),
  wild_draw_four: () => t("kind.wild_draw_four"),
  hit_2: () => t("kind.hit_2"),
  discard_all: () => t("kind.discard_all"),
  trade_hands: () => t("kind.trade_hands"),
  wild_all_hit: () => t("kind.wild_all_hit"),
  wild_hit_fire: () => t("kind.wild_hit_fire"),
};

// Number cards are their digit in every language.
export function kindName(id) {
  return KIND_TEXTS[id]?.() ?? id;
}

const CAUSE_TEXTS = {
  plain: () => t("cause.plain"),
  declined: () => t("cause.declined"),
  hit_2: () => t("kind.hit_2"),
  wild_all_hit: () => t("kind.wild_all_hit"),
  wild_hit_fire: () => t("kind.wild_hit_fire"),
  uno_penalty: () => t("cause.uno_penalty"),
  suggestion_penalty: () => t("cause.suggestion_penalty"),
  party_penalty: () => t("cause.party_penalty"),
  deal: () => t("cause.deal"),
  draw_two: () => t("kind.draw_two"),
  wild_draw_four: () => t("kind.wild_draw_four"),
  challenge_failed: () => t("cause.challenge_failed"),
  illegal_wild_draw_four: () => t("cause.illegal_wild_draw_four"),
  forgot_uno: () => t("cause.forgot_uno"),
  false_uno: () => t("cause.false_uno"),
  wrong_accusation: () => t("cause.wrong_accusation"),
  wrong_card: () => t("cause.wrong_card"),
};

export function causeName(cause) {
  return CAUSE_TEXTS[cause]?.() ?? cause;
}

export const RULESET_TEXTS = {
  uno_attack: () => [t("ruleset.uno_attack"), t("ruleset.uno_attack_about")],
  classic: () => [t("ruleset.classic"), t("ruleset.classic_about")],
};

export function rulesetName(id) {
  return RULESET_TEXTS[id]?.()[0] ?? id;
}

// A scoring option of the daemon's registry (rules.scoring: mode, final, target, teams), or undefined before the
// rules are read.
export function scoringOption(name) {
  return game.rules?.scoring.find((option) => option.name === name);
}

// The words of one value of a scoring choice ("mode", "final"): [name, one line about it]. A past game or a feed
// line may come before this phone has read the rules: then the catalogue's own key for that value.
export function choiceTexts(name, value) {
  const choice = scoringOption(name)?.choices.find((c) => c.value === value);
  if (choice) return [t(choice.words), t(choice.about)];
  const key = `${name}.${value}`;
  return ui.strings[key] === undefined ? [value, ""] : [t(key), t(`${key}_about`)];
}

export function modeName(mode) {
  return choiceTexts("mode", mode)[0];
}

// "Knock-out · target 500", "Chips · bust at −500", "Elimination · target 500 · to the last one standing".
export function modeLine(sb) {
  const values = { mode: modeName(sb.mode), target: number(sb.target) };
  const line = sb.mode === "chips" ? t("scores.mode_chips", values) : t("scores.mode", values);
  const final = sb.final_rule && choiceTexts("final", sb.final_rule)[0];
  return final ? `${line} · ${final}` : line;
}

// "Bob: press 2 more times", built from the demand's numbers (never from its English text).
export function demandText(demand) {
  const values = { player: demand.player, n: demand.presses || demand.cards };
  if (demand.until_fire) return t("prompt.until_fire", values);
  if (demand.presses) {
    if (demand.started) return demand.presses === 1 ? t("prompt.more_one", values) : t("prompt.more", values);
    return demand.presses === 1 ? t("prompt.once", values) : t("prompt.times", values);
  }
  if (demand.cards === 1) return t("prompt.card_one", values);
  return demand.started ? t("prompt.cards_more", values) : t("prompt.cards", values);
}

// Modes where the highest total is the best (elsewhere reaching the target is busting, or being out).
const HIGH_IS_BEST = new Set(["winner_collects", "chips"]);

// The sides from first to last as the game's mode ranks them, each {side, total, place}: the winners first, sharing
// first place whatever their totals (an elimination final's winner may have the higher total); then, in
// elimination, the sides still in before those out, the later out first; then by total, the highest first where
// the highest is best, else the lowest. Equal standing is an equal place (1, 2, 2, 4); seat order among equals.
export function ranked(sb) {
  const winners = new Set(sb.winners);
  const out = Array.isArray(sb.eliminated) ? {} : (sb.eliminated ?? {});
  const high = HIGH_IS_BEST.has(sb.mode);
  const standing = (side, total) =>
    winners.has(side) ? [0, 0, 0] : [1, side in out ? -out[side] : -Infinity, high ? -total : total];
  const compare = (a, b) => a.findIndex((v, i) => v !== b[i]);
  const order = (a, b) => {
    const i = compare(a.standing, b.standing);
    return i < 0 ? 0 : a.standing[i] < b.standing[i] ? -1 : 1;
  };
  const sides = sb.sides.map((side) => {
    const total = sb.totals[side] ?? 0;
    return { side, total, standing: standing(side, total) };
  });
  sides.sort(order);
  return sides.map(({ side, total, standing: mine }) => ({
    side,
    total,
    place: sides.findIndex((other) => compare(other.standing, mine) < 0) + 1,
  }));
}
