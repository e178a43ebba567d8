// Round entry (a card calculator or a typed total per player; in knock-out play the finishing order and the loser's
// hand; the winner's last card where a house rule asks for it) and the scoreboard: totals, the game-over banner
// with the winners and losers, the rounds with undo and edit, statistics, and a cumulative chart drawn as inline SVG.
// game.js imports it and calls its redraws; it shows a game through gamestate.js's `view`. Player and team names
// only ever go into the page through textContent.
import { request, refusal } from "./api.js";
import { $, byName, own, t, toast } from "./core.js";
import {
  game,
  view,
  CARD,
  el,
  option,
  names,
  number,
  showError,
  confirmTap,
  kindName,
  modeLine,
} from "./gamestate.js";

const SVG_NS = "http://www.w3.org/2000/svg";
// One marker per side, the same in the chart, its legend and the totals: a shape, never colour alone.
const MARKERS = ["●", "■", "▲", "◆", "▼", "✚", "✖", "★", "⬟", "⬢"];
const LABEL_CHARS = 9; // a longer name is cut in the chart (the table shows it whole)

const entry = {
  edit: null, // index of the round being edited, or null for the next round
  rounds: -1, // how many rounds the game had when the form was made
  winner: "",
  hands: {}, // player → {mode: "cards" | "total", counts: {kind: n}, total: ""}
  open: new Set(), // players whose calculator is open
  reshuffled: false,
  redZero: "",
  order: [], // knock-out play: every player of the round, first out first; the last one lost
  orderTouched: false, // the scorer reordered it: it no longer follows the table
  lastCard: "", // the card kind the winner went out on ("": not chosen)
  lastCardPicked: false, // chosen by the scorer (or the edited round's): no longer offered from the table
  sending: false,
  undoing: false,
};

// What each player last played, as far as the table was told (a declaration names the card): the last card
// offered when that player is the winner. Kinds whose card is unknown ("another card") forget it.
const DECLARED_CARDS = {
  hit2: "hit_2",
  wild_all_hit: "wild_all_hit",
  wild_hit_fire: "wild_hit_fire",
  skip: "skip",
  reverse: "reverse",
  draw_two: "draw_two",
  wild_draw_four: "wild_draw_four",
};
const lastPlayed = new Map(); // player → card kind, or null

// ---- Sides, eliminations, values ----

// "1 point" and "7 points", "1 card" and "4 cards": the singular has its own key (Chinese words need none).
function pointsText(points) {
  return points === 1 ? t("entry.point_one") : t("entry.points", { points: number(points) });
}

function cardsText(cards) {
  return cards === 1 ? t("entry.card_one") : t("entry.cards", { cards: number(cards) });
}

function eliminatedSides(scoreboard) {
  const out = scoreboard.eliminated ?? [];
  return new Set(Array.isArray(out) ? out : Object.keys(out));
}

function sideOf(player, scoreboard) {
  for (const [team, members] of Object.entries(scoreboard.teams ?? {})) if (members.includes(player)) return team;
  return player;
}

function deck() {
  return game.rules?.decks[game.data?.ruleset] ?? { kinds: [] };
}

// A hand's value as the daemon counts it: card points, one zero worth 100 for the red 0 holder (house rule).
function handValue(player) {
  const hand = entry.hands[player];
  if (!hand) return 0;
  if (hand.mode === "total") return Number.parseInt(hand.total, 10) || 0;
  let points = 0;
  for (const kind of deck().kinds) points += (hand.counts[kind.id] ?? 0) * kind.points;
  if (redZeroRule() && entry.redZero === player && hand.counts["0"] > 0) points += 100;
  return points;
}

function handCards(player) {
  const hand = entry.hands[player];
  return hand?.mode === "cards" ? Object.values(hand.counts).reduce((a, b) => a + b, 0) : null;
}

function redZeroRule() {
  return Boolean(game.data?.house_rules.red_zero_100);
}

function knockOut() {
  return game.data?.mode === "knock_out";
}

// The house rule "no action card to finish": the round form asks which card the winner went out on.
function lastCardRule() {
  const rules = game.data?.house_rules;
  return Boolean(rules?.last_card_not_action || rules?.last_card_not_skip_reverse_wild);
}

// Who went out first: chosen, or in knock-out play the first in the finishing order.
function entryWinner() {
  return knockOut() ? (entry.order[0] ?? "") : entry.winner;
}

// The players whose hands are asked for: everyone but the winner; in knock-out play only the loser.
function handPlayers() {
  if (knockOut()) return entry.order.length ? [entry.order[entry.order.length - 1]] : [];
  return entryPlayers().filter((p) => p !== entry.winner);
}

// Knock-out play: the finishing order as the table knows it: who went out, in order, then the players still in.
function tableOrder() {
  const players = entryPlayers();
  const out = (game.data?.table.out ?? []).filter((p) => players.includes(p));
  return [...out, ...players.filter((p) => !out.includes(p))];
}

// ---- Round entry ----

// The players of the round in the form: those still in the game, or the edited round's.
function entryPlayers() {
  const data = game.data;
  if (!data) return [];
  const { scoreboard } = data;
  if (entry.edit !== null) {
    const round = scoreboard.rounds[entry.edit];
    const inRound = new Set([round.winner, ...Object.keys(round.hands), ...(round.order ?? [])]);
    return data.players.filter((p) => inRound.has(p));
  }
  const out = eliminatedSides(scoreboard);
  return data.players.filter((p) => !out.has(sideOf(p, scoreboard)));
}

export function resetEntry(edit = null) {
  entry.edit = edit;
  entry.rounds = game.data?.scoreboard.rounds.length ?? -1;
  entry.winner = "";
  entry.hands = byName();
  entry.open = new Set();
  entry.reshuffled = false;
  entry.redZero = "";
  entry.order = [];
  entry.orderTouched = false;
  entry.lastCard = "";
  entry.lastCardPicked = edit !== null;
  if (edit !== null) {
    const round = game.data.scoreboard.rounds[edit];
    entry.winner = round.winner;
    entry.reshuffled = Boolean(round.reshuffled);
    entry.redZero = round.red_zero ?? "";
    entry.order = [...(round.order ?? [])];
    entry.orderTouched = true;
    entry.lastCard = round.last_card ?? "";
    for (const [player, hand] of Object.entries(round.hands)) {
      entry.hands[player] =
        typeof hand === "number"
          ? { mode: "total", counts: {}, total: String(hand) }
          : { mode: "cards", counts: { ...hand }, total: "" };
    }
  }
  for (const player of entryPlayers()) entry.hands[player] ??= { mode: "cards", counts: {}, total: "" };
  if (knockOut() && !entry.order.length) entry.order = tableOrder();
  if (edit === null) offerLastCard();
  showError("entry-error", "");
  $("entry-carry").hidden = true;
  buildEntry();
}

// Pre-select the card the winner last played, where the table was told it, until the scorer picks one.
function offerLastCard() {
  if (entry.lastCardPicked) return;
  const card = lastPlayed.get(entryWinner());
  entry.lastCard = card && deck().kinds.some((kind) => kind.id === card) ? card : "";
}

export function buildEntry() {
  const players = entryPlayers();
  const knock = knockOut();
  $("winner-row").hidden = knock;
  $("order-row").hidden = !knock;
  $("winner").replaceChildren(option("", t("entry.winner_pick")), ...players.map((p) => option(p, p)));
  $("winner").value = entry.winner;
  if (knock) buildOrder();
  $("entry-intro").textContent = knock ? t("entry.intro_loser") : t("entry.intro");
  const handsOf = handPlayers();
  $("hands").replaceChildren(...handsOf.map((p) => handBox(p, players.indexOf(p))));
  $("reshuffled").checked = entry.reshuffled;
  $("red-zero-row").hidden = !redZeroRule();
  $("red-zero").replaceChildren(option("", t("entry.red_zero_nobody")), ...handsOf.map((p) => option(p, p)));
  if (!handsOf.includes(entry.redZero)) entry.redZero = "";
  $("red-zero").value = entry.redZero;
  $("last-card-row").hidden = !lastCardRule();
  $("last-card").replaceChildren(
    option("", t("entry.last_card_pick")),
    ...deck().kinds.map((kind) => option(kind.id, kindName(kind.id))),
  );
  $("last-card").value = entry.lastCard;
  updateEntry();
}

// Knock-out play: the finishing order, each place with up and down; the last place is the round's loser.
function buildOrder() {
  const count = entry.order.length;
  $("order").replaceChildren(
    ...entry.order.map((player, i) => {
      const item = el("li", "seat order-place");
      item.dataset.player = player;
      const name = el("span", "order-name", player);
      if (i === count - 1) {
        item.dataset.loser = "true";
        name.append(el("span", "badge", `💥 ${t("entry.order_loser")}`));
      } else if (i === 0) {
        name.append(el("span", "badge", `🏁 ${t("entry.order_first")}`));
      }
      const button = (symbol, label, disabled, step) => {
        const node = el("button", "seat-button", symbol);
        node.type = "button";
        node.setAttribute("aria-label", label);
        node.disabled = disabled;
        node.addEventListener("click", () => moveInOrder(i, step));
        return node;
      };
      item.append(
        el("span", "seat-number", String(i + 1)),
        name,
        button("↑", t("entry.order_up", { player }), i === 0, -1),
        button("↓", t("entry.order_down", { player }), i === count - 1, 1),
      );
      return item;
    }),
  );
}

function moveInOrder(i, step) {
  const j = i + step;
  [entry.order[i], entry.order[j]] = [entry.order[j], entry.order[i]];
  entry.orderTouched = true;
  if (i * j === 0) offerLastCard(); // perhaps a new winner
  buildEntry();
  $("order").children[j].querySelectorAll("button")[step < 0 ? 0 : 1].focus();
}

function handBox(player, index) {
  const hand = entry.hands[player];
  const box = el("details", "hand");
  box.dataset.player = player;
  box.open = entry.open.has(player);
  box.addEventListener("toggle", () => (box.open ? entry.open.add(player) : entry.open.delete(player)));
  const summary = el("summary");
  summary.append(el("span", "hand-name", player), el("span", "hand-total"));
  const modes = el("div", "chips hand-mode");
  for (const [mode, text] of [
    ["cards", t("entry.by_cards")],
    ["total", t("entry.by_total")],
  ]) {
    const label = el("label", "chip");
    const input = el("input");
    input.type = "radio";
    input.name = `mode-${index}`;
    input.value = mode;
    input.checked = hand.mode === mode;
    input.addEventListener("change", () => {
      hand.mode = mode;
      updateEntry();
    });
    label.append(input, el("span", "", text));
    modes.append(label);
  }
  const calc = el("div", "calc");
  for (const kind of deck().kinds) {
    const cell = el("div", "cell");
    cell.dataset.kind = kind.id;
    const add = el("button", "card-add");
    add.type = "button";
    add.append(
      el("span", "card-name", kindName(kind.id)),
      el("span", "card-points", pointsText(kind.points)),
      el("span", "card-count"),
    );
    add.addEventListener("click", () => {
      hand.counts[kind.id] = (hand.counts[kind.id] ?? 0) + 1;
      updateEntry();
    });
    const minus = el("button", "card-minus", "−");
    minus.type = "button";
    minus.setAttribute("aria-label", t("entry.minus", { card: kindName(kind.id) }));
    minus.addEventListener("click", () => {
      hand.counts[kind.id] = Math.max(0, (hand.counts[kind.id] ?? 0) - 1);
      if (!hand.counts[kind.id]) delete hand.counts[kind.id];
      updateEntry();
    });
    cell.append(add, minus);
    calc.append(cell);
  }
  const typed = el("p", "field typed");
  const label = el("label", "", t("entry.typed"));
  const input = el("input");
  input.type = "number";
  input.inputMode = "numeric";
  input.min = "0";
  input.id = label.htmlFor = `typed-${index}`;
  input.value = hand.total;
  input.addEventListener("input", () => {
    hand.total = input.value;
    updateEntry();
  });
  typed.append(label, input);
  box.append(summary, modes, calc, typed);
  return box;
}

// The live parts of the form: each hand's total and counts, the sum, the save button.
function updateEntry() {
  const data = game.data;
  if (!data) return;
  const editing = entry.edit !== null;
  const next = data.scoreboard.rounds.length + 1;
  $("entry-title").textContent = editing
    ? t("entry.edit_title", { round: entry.edit + 1 })
    : t("entry.title", { round: next });
  const doubled = entry.reshuffled && data.house_rules.reshuffle_doubles;
  $("reshuffled-text").textContent = data.house_rules.reshuffle_doubles
    ? t("entry.reshuffled_double")
    : t("entry.reshuffled");
  let sum = 0;
  for (const box of document.querySelectorAll("#hands .hand")) {
    const player = box.dataset.player;
    const hand = entry.hands[player];
    const value = handValue(player);
    const cards = handCards(player);
    sum += value;
    box.querySelector(".hand-total").textContent =
      cards === null ? pointsText(value) : t("entry.hand", { points: pointsText(value), cards: cardsText(cards) });
    box.querySelector(".calc").hidden = hand.mode !== "cards";
    box.querySelector(".typed").hidden = hand.mode !== "total";
    for (const cell of box.querySelectorAll(".cell")) {
      const kind = deck().kinds.find((k) => k.id === cell.dataset.kind);
      const count = hand.counts[kind.id] ?? 0;
      cell.querySelector(".card-count").textContent = count ? `×${count}` : "";
      cell.dataset.count = String(count);
      if (count > kind.count) cell.dataset.over = "true";
      else delete cell.dataset.over;
      cell.querySelector(".card-minus").disabled = count === 0;
    }
  }
  $("entry-sum").textContent = doubled
    ? t("entry.sum_double", { points: number(sum), doubled: number(2 * sum) })
    : t("entry.sum", { points: pointsText(sum) });
  const save = $("entry-save");
  const over = data.scoreboard.over && !editing;
  save.textContent = over
    ? t("entry.over")
    : editing
      ? t("entry.save_edit", { round: entry.edit + 1 })
      : t("entry.save", { round: next });
  save.disabled = entry.sending || over;
  save.setAttribute("aria-busy", String(entry.sending));
  $("entry-cancel").hidden = !editing;
}

// Called whenever the game changed: a round scored, undone or edited elsewhere starts the form afresh. In
// knock-out play the finishing order follows the players going out, until the scorer reorders it.
export function renderEntry() {
  const data = game.data;
  if (!data) return;
  const rounds = data.scoreboard.rounds.length;
  if (rounds !== entry.rounds || (entry.edit !== null && entry.edit >= rounds)) {
    resetEntry();
  } else if (knockOut() && entry.edit === null && !entry.orderTouched && tableOrder().join() !== entry.order.join()) {
    entry.order = tableOrder();
    buildEntry();
  } else {
    updateEntry();
  }
}

function roundBody() {
  const hands = byName();
  for (const player of handPlayers()) {
    const hand = entry.hands[player];
    if (hand.mode === "total") {
      const typed = hand.total.trim();
      hands[player] = /^\d+$/.test(typed) ? Number(typed) : typed === "" ? null : typed;
    } else {
      hands[player] = Object.fromEntries(Object.entries(hand.counts).filter(([, n]) => n > 0));
    }
  }
  const body = knockOut() ? { order: [...entry.order] } : { winner: entry.winner };
  Object.assign(body, { hands, reshuffled: entry.reshuffled, red_zero: entry.redZero || null });
  // Asked only with the house rule; a corrected round keeps the card it was stored with.
  if (lastCardRule() || (entry.edit !== null && entry.lastCard)) body.last_card = entry.lastCard || null;
  return body;
}

// `carry`: the table chose to score the round although someone still owes the launcher (the winner went out on
// an attack card); what is owed is then pressed first in the next round.
async function saveRound(carry = false) {
  if (entry.sending || !game.data) return;
  $("entry-carry").hidden = true;
  if (!entryWinner()) {
    showError("entry-error", t("entry.no_winner"));
    return;
  }
  if (lastCardRule() && !entry.lastCard) {
    showError("entry-error", t("entry.no_last_card", { player: entryWinner() }));
    $("last-card").focus();
    return;
  }
  const body = roundBody();
  const winner = entryWinner();
  if (carry === true) body.carry_open_attacks = true;
  const blank = Object.keys(body.hands).find((p) => body.hands[p] === null);
  if (blank !== undefined) {
    showError("entry-error", t("entry.no_total", { player: blank }));
    return;
  }
  const editing = entry.edit;
  entry.sending = true;
  showError("entry-error", "");
  updateEntry();
  try {
    const answer =
      editing === null
        ? await request("POST", "/api/games/current/rounds", body)
        : await request("PUT", `/api/games/current/rounds/${editing}`, body);
    entry.sending = false;
    view.show(answer.game);
    resetEntry();
    view.tab("scores");
    // A round that ends the game is told by the winner card, which a toast would lie over.
    if (!answer.game.scoreboard.over) {
      // The round just saved, at the foot of the list, and Take back under it, ready if it was wrong.
      $("undo").scrollIntoView({ block: "center" });
      $("undo").focus({ preventScroll: true });
      toast(
        editing === null
          ? t("feed.round_scored", { round: answer.game.scoreboard.rounds.length, winner })
          : t("feed.round_edited", { round: editing + 1 }),
      );
    }
  } catch (error) {
    showError("entry-error", refusal(error));
    $("entry-carry").hidden = error.code !== "attacks_open" || editing !== null;
  } finally {
    entry.sending = false;
    updateEntry();
  }
}

function editRound(index) {
  resetEntry(index);
  view.tab("round");
  $("panel-round").scrollIntoView({ block: "start" });
}

async function undoRound() {
  if (entry.undoing) return;
  entry.undoing = true;
  try {
    const body = await request("DELETE", "/api/games/current/rounds/last");
    if (body.game) view.show(body.game);
  } catch (error) {
    toast(refusal(error));
  } finally {
    entry.undoing = false;
    renderScores();
  }
}

// ---- Scoreboard ----

export function renderScores() {
  const data = game.data;
  if (!data) return;
  const sb = data.scoreboard;
  const out = eliminatedSides(sb);
  const winners = new Set(sb.winners);
  const losers = new Set(sb.losers ?? []);
  const over = $("over");
  over.hidden = !sb.over && !sb.final;
  over.dataset.state = sb.over ? "over" : "final";
  const wonLost = losers.size
    ? t("scores.over_losers", { winners: names(sb.winners), losers: names([...losers]) })
    : t("scores.over", { winners: names(sb.winners) });
  over.textContent = sb.over ? `🏆 ${wonLost}` : `⚔ ${t("scores.final")}`;
  $("scores-mode").textContent = modeLine(sb);

  // Totals, one row per side, with its marker; the out and the winners marked in symbols and words.
  const head = el("tr");
  head.append(
    el("th", "", ""),
    el("th", "", sb.teams ? t("scores.team") : t("scores.player")),
    el("th", "num", t("scores.total")),
  );
  for (const cell of head.children) cell.scope = "col";
  const body = el("tbody");
  sb.sides.forEach((side, i) => {
    const row = el("tr");
    row.dataset.side = side;
    const marker = el("td", `marker s${i % MARKERS.length}`, MARKERS[i % MARKERS.length]);
    marker.setAttribute("aria-hidden", "true");
    const name = el("th", "side-name", side);
    name.scope = "row";
    if (own(sb.teams, side)) name.append(el("span", "members", names(sb.teams[side])));
    if (winners.has(side)) {
      row.dataset.winner = "true";
      name.append(el("span", "badge", `🏆 ${t("scores.won")}`));
    }
    if (out.has(side)) {
      row.dataset.out = "true";
      name.append(el("span", "badge", `✗ ${t("scores.out")}`));
    }
    if (losers.has(side)) {
      row.dataset.loser = "true";
      name.append(el("span", "badge", `💥 ${t("scores.lost")}`));
    }
    row.append(marker, name, el("td", "num total", number(own(sb.totals, side) ?? 0)));
    body.append(row);
  });
  const thead = el("thead");
  thead.append(head);
  $("totals").replaceChildren(thead, body);

  // The rounds, newest first, each with an edit button; undo takes back the last one.
  $("rounds-none").hidden = sb.rounds.length > 0;
  $("rounds").replaceChildren(
    ...sb.rounds
      .map((round) => {
        const item = el("li");
        item.dataset.index = round.index;
        const text = el("span", "round-text");
        text.append(el("strong", "", t("scores.round", { round: round.index + 1, winner: round.winner })));
        const points = sb.sides
          .filter((side) => Object.hasOwn(round.points, side))
          .map((side) => `${side} ${round.points[side] > 0 ? "+" : ""}${number(round.points[side])}`);
        if (round.order) {
          const order = el("span", "round-order", t("scores.order", { order: round.order.join(" › ") }));
          text.append(order);
        }
        text.append(el("span", "round-points", points.join(" · ")));
        if (round.last_card) {
          text.append(el("span", "badge", `${CARD} ${t("scores.last_card", { card: kindName(round.last_card) })}`));
        }
        if (round.reshuffled) text.append(el("span", "badge", `↻ ${t("scores.reshuffled")}`));
        for (const side of round.eliminated ?? []) {
          text.append(el("span", "badge", `✗ ${t("scores.out_named", { side })}`));
        }
        const edit = el("button", "pill edit", `✎ ${t("scores.edit")}`);
        edit.type = "button";
        edit.setAttribute("aria-label", t("scores.edit_round", { round: round.index + 1 }));
        edit.addEventListener("click", () => editRound(round.index));
        item.append(text, edit);
        return item;
      })
      .reverse(),
  );
  const undo = $("undo");
  undo.hidden = sb.rounds.length === 0;
  if (undo.dataset.confirm !== "true") undo.textContent = `↶ ${t("scores.undo", { round: sb.rounds.length })}`;
  undo.disabled = entry.undoing;

  // Statistics per player; in knock-out play each player's place in every round (1: first out).
  const places = sb.mode === "knock_out";
  const statsHead = el("tr");
  for (const [text, cls] of [
    [t("scores.player"), ""],
    [t("stats.presses"), "num"],
    [t("stats.cards"), "num"],
    [t("stats.won"), "num"],
    ...(places ? [[t("stats.places"), "places"]] : []),
  ]) {
    const cell = el("th", cls, text);
    cell.scope = "col";
    statsHead.append(cell);
  }
  const statsBody = el("tbody");
  for (const player of data.players) {
    const stats = own(sb.statistics, player) ?? {};
    const row = el("tr");
    row.dataset.player = player;
    const name = el("th", "", player);
    name.scope = "row";
    row.append(
      name,
      el("td", "num", number(stats.presses ?? 0)),
      el("td", "num", number(stats.cards ?? 0)),
      el("td", "num", number(stats.rounds_won ?? 0)),
    );
    if (places) row.append(el("td", "places", (stats.places ?? []).map(number).join(" · ") || "–"));
    statsBody.append(row);
  }
  const statsThead = el("thead");
  statsThead.append(statsHead);
  $("stats").replaceChildren(statsThead, statsBody);

  drawChart(sb);
}

// ---- The cumulative chart ----

function svg(tag, attributes = {}) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

// The marker of side i at (x, y): the same shape as MARKERS[i].
function marker(i, x, y) {
  const r = 4.5;
  const shape = i % MARKERS.length;
  const polygon = (corners, turn, inner = null) => {
    const points = [];
    const n = inner ? corners * 2 : corners;
    for (let k = 0; k < n; k++) {
      const angle = turn + (k * 2 * Math.PI) / n;
      const radius = inner && k % 2 ? r * inner : r * 1.15;
      points.push(`${(x + radius * Math.cos(angle)).toFixed(1)},${(y + radius * Math.sin(angle)).toFixed(1)}`);
    }
    return svg("polygon", { points: points.join(" ") });
  };
  const cross = (turn) => {
    const d = [0, 1].map((k) => {
      const a = turn + (k * Math.PI) / 2;
      const dx = r * Math.cos(a);
      const dy = r * Math.sin(a);
      return `M${(x - dx).toFixed(1)} ${(y - dy).toFixed(1)}L${(x + dx).toFixed(1)} ${(y + dy).toFixed(1)}`;
    });
    return svg("path", { d: d.join(""), class: "stroke-marker" });
  };
  switch (shape) {
    case 0:
      return svg("circle", { cx: x, cy: y, r });
    case 1:
      return svg("rect", { x: x - r * 0.9, y: y - r * 0.9, width: r * 1.8, height: r * 1.8 });
    case 2:
      return polygon(3, -Math.PI / 2);
    case 3:
      return polygon(4, 0);
    case 4:
      return polygon(3, Math.PI / 2);
    case 5:
      return cross(0);
    case 6:
      return cross(Math.PI / 4);
    case 7:
      return polygon(5, -Math.PI / 2, 0.45);
    case 8:
      return polygon(5, -Math.PI / 2);
    default:
      return polygon(6, 0);
  }
}

function drawChart(sb) {
  const chart = $("chart");
  const figure = chart.parentElement;
  figure.hidden = sb.rounds.length === 0;
  if (figure.hidden) return;
  const [width, height] = [320, 200];
  const left = 36;
  const right = width - 96; // room for the names at the lines' ends
  const top = 12;
  const bottom = height - 22;
  const n = sb.rounds.length;
  const series = sb.sides.map((side) => [0, ...sb.rounds.map((round) => own(round.totals, side) ?? 0)]);
  // In chips the balances go below zero, and the line to watch is minus the target (bust).
  const line = sb.mode === "chips" ? -sb.target : sb.target;
  const high = Math.max(line, ...series.flat(), 1);
  const low = Math.min(line, ...series.flat(), 0);
  const x = (i) => left + ((right - left) * i) / Math.max(n, 1);
  const y = (v) => bottom - ((bottom - top) * (v - low)) / (high - low);
  const nodes = [];
  // Axes, the target line and the round numbers.
  nodes.push(svg("path", { d: `M${left} ${top}V${bottom}H${right}`, class: "axis" }));
  if (low < 0) nodes.push(svg("path", { d: `M${left} ${y(0).toFixed(1)}H${right}`, class: "axis" }));
  nodes.push(svg("path", { d: `M${left} ${y(line).toFixed(1)}H${right}`, class: "target" }));
  const label = (text, attributes) => {
    const node = svg("text", attributes);
    node.textContent = text;
    return node;
  };
  nodes.push(label(`🎯 ${number(line)}`, { x: left - 4, y: y(line) + 4, class: "tick end" }));
  nodes.push(label("0", { x: left - 4, y: y(0) + 4, class: "tick end" }));
  const every = Math.ceil(n / 10);
  for (let i = 1; i <= n; i += 1) {
    if (i % every === 0 || i === n) nodes.push(label(String(i), { x: x(i), y: bottom + 15, class: "tick middle" }));
  }
  // One line per side, its marker at every round, its name at its end (moved apart where names would overlap).
  const ends = [];
  series.forEach((values, i) => {
    const group = svg("g", { class: `series s${i % MARKERS.length}` });
    group.dataset.side = sb.sides[i];
    const points = values.map((v, k) => `${x(k).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    group.append(svg("polyline", { points, class: "line" }));
    values.forEach((v, k) => group.append(marker(i, x(k), y(v))));
    nodes.push(group);
    ends.push({ i, y: y(values[n]), group });
  });
  ends.sort((a, b) => a.y - b.y);
  const gap = 13;
  for (let k = 1; k < ends.length; k++) ends[k].y = Math.max(ends[k].y, ends[k - 1].y + gap);
  const overflow = ends.length ? ends[ends.length - 1].y - (bottom + 4) : 0;
  if (overflow > 0) for (const end of ends) end.y = Math.max(top, end.y - overflow);
  for (const end of ends) {
    const side = sb.sides[end.i];
    const short = [...side].length > LABEL_CHARS ? `${[...side].slice(0, LABEL_CHARS - 1).join("")}…` : side;
    const name = label("", { x: right + 5, y: end.y + 4, class: "name" });
    const glyph = svg("tspan", { class: "glyph" });
    glyph.textContent = `${MARKERS[end.i % MARKERS.length]} `;
    const text = svg("tspan");
    text.textContent = short;
    name.append(glyph, text);
    end.group.append(name);
  }
  const title = svg("title");
  title.textContent = t("scores.chart");
  chart.replaceChildren(title, ...nodes);
}

// ---- Start ----

function startScore() {
  $("winner").addEventListener("change", (e) => {
    entry.winner = e.target.value;
    if (entry.redZero === entry.winner) entry.redZero = "";
    offerLastCard();
    buildEntry();
  });
  $("last-card").addEventListener("change", (e) => {
    entry.lastCard = e.target.value;
    entry.lastCardPicked = true;
    updateEntry();
  });
  $("reshuffled").addEventListener("change", (e) => {
    entry.reshuffled = e.target.checked;
    updateEntry();
  });
  $("red-zero").addEventListener("change", (e) => {
    entry.redZero = e.target.value;
    updateEntry();
  });
  $("entry-save").addEventListener("click", () => saveRound());
  $("entry-carry").addEventListener("click", () => saveRound(true));
  $("entry-cancel").addEventListener("click", () => {
    resetEntry();
    view.tab("scores");
  });
  $("undo").addEventListener("click", (e) => {
    const count = game.data?.scoreboard.rounds.length ?? 0;
    confirmTap(e.currentTarget, `↶ ${t("scores.undo_confirm", { round: count })}`, undoRound);
  });
}

// Remember what each player played, for the last card; a new round (or a new game) starts afresh.
function rememberPlayed({ type, data }, fresh) {
  if (!fresh) return;
  if (type === "attack.started" && data.by) lastPlayed.set(data.by, DECLARED_CARDS[data.kind] ?? null);
  else if (type === "round.scored" || type === "game.started") lastPlayed.clear();
  else return;
  if (game.data && entry.edit === null) {
    offerLastCard();
    $("last-card").value = entry.lastCard;
  }
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  start: startScore,
  render: () => {
    if (game.data) buildEntry(); // the calculator's card names in the new language
  },
  event: rememberPlayed,
};
