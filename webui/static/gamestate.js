// What the game's modules (game.js, score.js, setup.js, history.js) share: the game from the daemon, small DOM
// helpers and the names of rules things; with the table screen (table.js) too, trouble at the launcher in words.
// game.js imports score.js and setup.js, so they reach its redraws through `view`, which game.js fills when it
// loads: no module imports one that imports it.
import { $, ui, t } from "./core.js";

const CONFIRM_MS = 4000; // a second tap within this time confirms (undo, a new game over one in play)
export const CARD = "🃏\uFE0F"; // the playing card as an emoji, not as a text glyph

export const game = {
  data: null, // GET /api/game's "game": the current game, or null
  rules: null, // GET /api/game's "rules": rulesets, decks, scoring options, house rules, declarations
  tab: null, // the tab shown
  mine: [], // the players this phone belongs to ("I am …") in the current game: one, or several sharing it
  // The one of them holding the phone now: whoever the table asks (or the first of them waiting in the queue),
  // else the first; null for a phone of nobody's.
  get me() {
    const queued = [asked(), ...(this.data?.table.demands ?? []).map((demand) => demand.player)];
    return queued.find((player) => this.mine.includes(player)) ?? this.mine[0] ?? null;
  },
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

// "Ann, Bob and Cy" in the reader's language; "Ann or Bob" with type "disjunction".
export function names(list, type = "conjunction") {
  try {
    return new Intl.ListFormat(ui.lang, { type }).format(list);
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

// ---- Trouble at the launcher ----

// Who the table asks to press next: whoever owes first, else whose turn it is (null: nobody named, or no game).
export function asked() {
  const data = game.data;
  if (!data || data.scoreboard.over) return null;
  return data.table.pending?.player ?? data.table.current ?? null;
}

// Why the launcher stopped, in plain words (the daemon's message is for the log). Literal keys for tests/test_i18n.py.
const FAULT_CAUSES = {
  board: () => t("fault.cause_board"),
  motor: () => t("fault.cause_motor"),
  dispenser: () => t("fault.cause_dispenser"),
  record: () => t("fault.cause_record"),
};

export function faultReason(cause) {
  return FAULT_CAUSES[cause]?.() ?? t("fault.cause_other");
}

// Events that may start or end trouble: the state says which, and who presses after. A press's plain end only
// matters while there is trouble (a jam is over with the next press that is not one) or when it left cards owed.
const TROUBLE_EVENTS = new Set([
  "launcher.jammed",
  "launcher.empty",
  "launcher.stopped",
  "launcher.lid",
  "hardware.fault",
  "hardware.ok",
  "hopper.reloaded",
]);
const PRESS_END_EVENTS = new Set(["launcher.fired", "launcher.dealt", "launcher.missed"]);

export function mayChangeTrouble({ type, data }) {
  if (TROUBLE_EVENTS.has(type)) return true;
  if (!PRESS_END_EVENTS.has(type)) return false;
  return ui.trouble !== null || data.owed > 0 || data.dispensed < data.requested; // a classic deal cut short
}

// Trouble at the launcher (/api/state's `trouble`): what happened, what to do. Literal keys for tests/test_i18n.py.
const TROUBLE_WHAT = {
  jam: (values) => (values.player ? t("trouble.jam_player", values) : t("trouble.jam")),
  stuck: () => t("trouble.stuck"),
  empty: () => t("trouble.empty"),
  short: (values) => (values.owed === 1 ? t("trouble.short_one", values) : t("trouble.short", values)),
  lid_open: () => t("trouble.lid_open"),
  fault: () => t("trouble.fault"),
  board_lost: () => t("trouble.board_lost"),
};
// A jam the lid was opened and shut for (`opened`): nothing can tell whether the card is out, so the table is asked.
// The lid open on a jam (`behind`): the card to take out before it is shut.
const TROUBLE_DO = {
  jam: ({ opened }) => (opened ? t("trouble.do_card_out") : t("trouble.do_jam")),
  stuck: ({ opened }) => (opened ? t("trouble.do_card_out") : t("trouble.do_stuck")),
  empty: () => t("trouble.do_refill"),
  short: () => t("trouble.do_refill"),
  lid_open: ({ behind }) =>
    behind === "jam" ? t("trouble.do_lid_jam") : behind === "stuck" ? t("trouble.do_lid_stuck") : t("trouble.do_lid"),
  fault: () => t("trouble.do_fault"),
  board_lost: () => t("trouble.do_board"),
};

// "Dad takes 4 of the refill cards first"; on Dad's own phone (`mine`), "You take 4 …".
function takesWords({ player, cards }, mine) {
  const values = { player, n: cards };
  if (mine) return cards === 1 ? t("trouble.you_take_one") : t("trouble.you_take", values);
  return cards === 1 ? t("trouble.takes_one", values) : t("trouble.takes", values);
}

// Trouble that the launcher would refuse a press for, or that a press cannot help (an empty hopper): every phone's
// button, and the table screen's, says why it cannot be pressed. Literal keys for tests/test_i18n.py.
export const BLOCKED_BY = {
  lid_open: () => t("button.why_lid"),
  fault: () => t("button.why_fault"),
  board_lost: () => t("button.why_board"),
  empty: () => t("button.why_empty"),
  short: () => t("button.why_empty"),
};

// The trouble a phone tells: the launcher's (/api/state's), else an empty hopper its count shows before a press
// fails (a press could only fail, so the refill is offered at once).
const EMPTY = { code: "empty", player: null, owed: [] };
export function shownTrouble() {
  return ui.trouble ?? (ui.hopper?.remaining === 0 ? EMPTY : null);
}

// The trouble in words, as every phone's prompt and the table screen tell it: `what` happened, what `todo`, and who
// presses `after` ("" when nobody is named). `screen`: the table screen's own, `{ cause }` of a FAULT, which it names
// (it has no fault banner), and its refill is tapped on a phone (it has no ↻).
export function troubleWords(trouble, screen = null) {
  // A short fire's cards are owed to the player it was for (or several players, after more than one).
  const owed = trouble.owed.reduce((sum, o) => sum + o.cards, 0);
  const values = { player: trouble.player ?? "", owed };
  const faulted = screen && trouble.code === "fault";
  const what = faulted
    ? t("trouble.fault_cause", { reason: faultReason(screen.cause) })
    : (TROUBLE_WHAT[trouble.code] ?? TROUBLE_WHAT.fault)(values);
  // "You" only on a phone of that one player: on a shared phone it would not say which of them.
  const own = (player) => !screen && game.mine.length === 1 && game.mine[0] === player;
  const takes = trouble.owed.map((o) => (o.player ? takesWords(o, own(o.player)) : ""));
  const refill = screen && ["empty", "short"].includes(trouble.code);
  const todo = [refill ? t("trouble.do_refill_phone") : (TROUBLE_DO[trouble.code] ?? TROUBLE_DO.fault)(trouble), ...takes]
    .filter(Boolean)
    .join(" ");
  // A jammed press cost nobody their press: the same player presses again; after any other trouble, whoever the
  // table asks.
  const next = asked();
  const again = (["jam", "stuck"].includes(trouble.code) || trouble.behind) && next && next === trouble.player;
  const after = !next ? "" : again ? t("trouble.then_again", { player: next }) : t("trouble.then", { player: next });
  return { what, todo, after };
}
