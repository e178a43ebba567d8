// The game at the table: the current game from /api/game, kept live by the event stream. Here: the prompt on the
// first screen (who must press, how often, who comes next), the tabs, the table panel with its declarations and
// the feed lines of game events. score.js has round entry and the scoreboard, setup.js the new game and the rules.
// Player and team names are data: they only ever reach the page through textContent.
import { request, refusal } from "./api.js";
import { confirmed } from "./confirm.js";
import { keepWithin } from "./fit.js";
import { $, byName, hooks, ui, t, stored, remember, vibrate, toast } from "./core.js";
import {
  game,
  view,
  CARD,
  el,
  option,
  names,
  showError,
  kindName,
  causeName,
  rulesetName,
  demandText,
  asked,
  troubleWords,
  shownTrouble,
  BLOCKED_BY,
} from "./gamestate.js";
import { resetEntry, renderEntry, renderScores } from "./score.js";
import { renderSetup, renderGameRules } from "./setup.js";

const ME_KEY = "uno-launcher.me"; // the phone's first player
const MINE_KEY = "uno-launcher.mine"; // all of its players, as a JSON list, when several share it
const WATCH_KEY = "uno-launcher.watching"; // "yes": this phone chose to watch, so nobody asks it who it is
const VIBRATE_ME = [200, 100, 200];
const GAME_RELOAD_MS = 100; // events close together are read with one GET /api/game
const MAX_COUNT = 4; // identical cards at once (house rule): 1 to this
const PROMPT_ME_LINES = 2; // this phone's own line: the button stays on a 320×640 first screen under it
// The declarations come from the daemon's registry (rules.actions): each action's kind, the rulesets, modes and
// house rule it belongs to, its fields (how the page fills each: "who", "count", "catchers", "first_card", "preset")
// and its buttons (group, symbol, catalogue key, the values it sends). The page keeps no list of its own.

// The declarations this game offers, as buttons in the order the registry gives: each with its action's kind,
// group and fields, and the button's id, words, symbol and preset values. [] without a game.
export function offeredDeclarations(data = game.data) {
  if (!data || !game.rules?.actions) return [];
  const offered = [];
  for (const action of game.rules.actions) {
    if (!action.rulesets.includes(data.ruleset)) continue;
    if (action.modes && !action.modes.includes(data.mode)) continue;
    if (action.house_rule && !data.house_rules[action.house_rule]) continue;
    for (const button of action.buttons) {
      if (!button.rulesets.includes(data.ruleset)) continue;
      offered.push({ ...button, kind: action.kind, group: action.group, fields: action.fields });
    }
  }
  return offered;
}

function registryAction(kind) {
  return game.rules?.actions?.find((action) => action.kind === kind);
}

// A declaration's button (by its id, else the first of its kind) in this game's ruleset.
function declarationButton(id) {
  const offered = offeredDeclarations();
  return offered.find((button) => button.id === id) ?? offered.find((button) => button.kind === id);
}

// The words for a declaration, with the table's house numbers in them ("Forgot UNO: press 3"). A feed line may
// come before this phone has read the game's rules (an event over the stream as the page opens): then the
// catalogue's own key for that kind.
export function declarationName(id) {
  const defaults = Object.entries(game.rules?.house_rule_numbers ?? {}).map(([key, number]) => [key, number.default]);
  const numbers = { ...Object.fromEntries(defaults), ...game.data?.house_rules };
  const button = declarationButton(id);
  if (button) return t(button.words, numbers);
  const key = [`decl.${id}`, `kind.${id}`].find((name) => ui.strings[name] !== undefined);
  return key ? t(key, numbers) : id;
}

// ---- The game from the daemon ----

async function loadGame() {
  if (game.loading) {
    game.again = true;
    return game.loading;
  }
  game.loading = (async () => {
    try {
      const body = await request("GET", "/api/game");
      game.rules = body.rules;
      showGame(body.game);
    } finally {
      game.loading = null;
    }
  })();
  const loading = game.loading;
  await loading;
  if (game.again) {
    game.again = false;
    await loadGame();
  }
}

let reloadTimer;
function reloadSoon() {
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(() => loadGame().catch(() => {}), GAME_RELOAD_MS);
}

// The whole game, from GET /api/game or an answer to this phone's request.
function showGame(data) {
  const started = data && data.id !== game.data?.id;
  game.data = data ?? null;
  const shape = data ? JSON.stringify([data.id, data.players, data.ruleset, data.house_rules, data.track_turns]) : "";
  if (shape !== game.shape) {
    game.shape = shape;
    game.current = undefined;
    buildTableControls();
    resetEntry();
  }
  if (started && game.tab === "new") game.tab = "table";
  renderGame();
}

// Only the table changed (an attack event): redraw what shows it.
function showTable(table) {
  game.data = { ...game.data, table };
  renderPrompt();
  renderTablePanel();
  for (const hook of hooks.seated) hook();
}

function showScoreboard(scoreboard) {
  game.data = { ...game.data, scoreboard };
  renderPrompt();
  renderScores();
  renderEntry();
  for (const hook of hooks.seated) hook();
}

// An event's scores are the scoreboard but for what grows with every round: the rounds are kept here (the new one
// added, or cut back by an undo; a correction's later totals come with the reload that follows), and each player's
// places in knock-out play are read from them.
function showScores(type, data) {
  let { rounds } = game.data.scoreboard;
  if (type === "round.scored") rounds = [...rounds.slice(0, data.round), data.result];
  else if (type === "round.undone") rounds = rounds.slice(0, data.round);
  const statistics = byName();
  for (const [player, stats] of Object.entries(data.scores.statistics)) {
    const places = rounds.filter((r) => r.order?.includes(player)).map((r) => r.order.indexOf(player) + 1);
    statistics[player] = { ...stats, places };
  }
  showScoreboard({ ...data.scores, statistics, rounds });
}

// Events after which the whole game is read again (GET /api/game, 304 when this phone has that version). Not a
// press: its attack.progress carries all a press changes (the table and the scores), so a long game's presses do
// not each make every phone read every round.
const GAME_EVENTS = new Set([
  "game.started",
  "attack.started",
  "attack.finished",
  "attack.undone",
  "round.scored",
  "round.undone",
  "round.edited",
  "game.finished",
]);

function onGameEvent({ type, data }, fresh) {
  if (!fresh) return; // the history replayed when the page opens: GET /api/game already holds it
  if (type === "attack.progress" || type === "attack.undone") hideUndo(); // a press came, or it was undone
  if (GAME_EVENTS.has(type)) {
    // Show the event's own state at once, then read the whole game to be exact.
    if (game.data && data.table && type.startsWith("attack.")) showTable(data.table);
    if (game.data && data.scores) showScores(type, data);
    reloadSoon();
  } else if (type === "attack.progress" && game.data) {
    showTable(data.table);
    showScores(type, data);
  }
}

// ---- Rendering ----

function renderGame() {
  $("game").hidden = !game.rules;
  if (!game.rules) return;
  renderTabs();
  renderPrompt();
  renderTablePanel();
  renderEntry();
  renderScores();
  renderSetup();
  renderGameRules();
  for (const hook of hooks.seated) hook();
}

const TABS = ["table", "round", "scores", "new", "rules"];

function renderTabs() {
  const open = game.data ? TABS : ["new", "rules"];
  if (!open.includes(game.tab)) game.tab = open[0];
  for (const name of TABS) {
    const button = $(`tab-${name}`);
    const selected = name === game.tab;
    button.hidden = !open.includes(name);
    button.setAttribute("aria-selected", String(selected));
    button.tabIndex = selected ? 0 : -1;
    $(`panel-${name}`).hidden = !selected;
  }
}

function showTab(name) {
  game.tab = name;
  renderTabs();
}

// The short form in the queue: "×2", "🔥", "🃏7"; nothing for a single press.
function demandShort(demand) {
  if (demand.until_fire) return "🔥";
  if (demand.presses) return demand.presses === 1 ? "" : `×${demand.presses}`;
  return `${CARD}${demand.cards}`;
}

function renderTrouble(trouble) {
  $("trouble").hidden = !trouble;
  if (!trouble) return;
  $("trouble").dataset.code = trouble.code;
  const words = troubleWords(trouble);
  $("trouble-what").textContent = words.what;
  $("trouble-do").textContent = words.todo;
  $("trouble-next").textContent = words.after;
  // The way out at hand where the trouble is told: on a small phone the hopper's own ↻, and the admin's Reset in the
  // fault banner, are below the first screen.
  $("trouble-refill").hidden = !["empty", "short"].includes(trouble.code);
  $("trouble-reset").hidden = trouble.code !== "fault" || !ui.admin;
}

// What this phone's player is called to do now: "turn" (their plain turn: play a card, or press if they cannot),
// "demand" (they owe the launcher), or null.
export function phoneCall() {
  if (!game.me || asked() !== game.me) return null;
  return game.data.table.pending ? "demand" : "turn";
}

export function renderPrompt() {
  const data = game.data;
  const trouble = shownTrouble();
  $("prompt").hidden = !data && !trouble;
  renderTrouble(trouble);
  if (!data) {
    for (const id of ["prompt-row", "prompt-cause", "prompt-next", "prompt-me"]) $(id).hidden = true;
    renderQuick();
    return;
  }
  const { table, scoreboard } = data;
  const pending = table.pending;
  let symbol, text;
  let cause = "";
  if (scoreboard.over) {
    symbol = "🏆";
    text = t("prompt.over", { winners: names(scoreboard.winners) });
  } else if (pending) {
    symbol = pending.until_fire ? "🔥" : pending.cards ? CARD : "✋";
    text = demandText(pending);
    const what = causeName(pending.cause);
    cause = pending.by ? t("prompt.by", { cause: what, by: pending.by }) : what;
  } else if (table.current) {
    symbol = "▶";
    text = t("prompt.turn", { player: table.current });
  } else {
    symbol = "▶";
    text = t("prompt.free");
  }
  // This phone's player must press: an open demand on them, else their plain turn.
  const mine = Boolean(game.me && !scoreboard.over && (pending ? pending.player : table.current) === game.me);
  // Further down the queue (a Wild All Hit): whose press comes just before theirs.
  const before = mine || scoreboard.over ? null : pressesBefore(table.demands, game.me);
  const box = $("prompt");
  box.dataset.state = scoreboard.over ? "over" : pending ? "demand" : "turn";
  if (mine) box.dataset.me = "true";
  else delete box.dataset.me;
  $("prompt-symbol").textContent = symbol;
  $("prompt-text").textContent = text;
  $("prompt-me").hidden = !mine && !before;
  // This phone's own line says it, in the words of "you"; trouble's own line says whose go it is after (and while no
  // press can be taken, what is owed waits: the table's line would contradict the grey button).
  $("prompt-row").hidden = mine || Boolean(trouble && (!pending || BLOCKED_BY[trouble.code]));
  if (before) $("prompt-me").dataset.waiting = "true";
  else delete $("prompt-me").dataset.waiting;
  $("prompt-me-symbol").textContent = mine ? "👉" : "⏳";
  $("prompt-me-text").textContent = mine ? mineText(pending, trouble) : before ? afterText(before) : "";
  $("prompt-cause").textContent = cause;
  $("prompt-cause").hidden = !cause || Boolean(trouble);
  const waiting = scoreboard.over ? [] : table.demands.slice(1);
  $("prompt-next").hidden = waiting.length === 0;
  $("prompt-queue").replaceChildren(
    ...waiting.map((demand) => {
      const item = el("li", "", demand.player);
      item.dataset.player = demand.player;
      if (game.mine.includes(demand.player)) item.dataset.me = "true";
      const short = demandShort(demand);
      if (short) item.append(el("span", "queue-amount", short));
      return item;
    }),
  );
  alertMe(mine ? pending : null);
  renderQuick();
}

// The player whose demand is just before `player`'s first one in the queue, or null (not in the queue, or first).
function pressesBefore(demands, player) {
  const index = player ? demands.findIndex((demand) => demand.player === player) : -1;
  return index > 0 ? demands[index - 1].player : null;
}

// While the launcher cannot take a press, what the player asked does meanwhile: wait, and for whom (the disc says
// why it is off). Literal keys for tests/test_i18n.py.
const WAIT_FOR = {
  fault: (player) => t("mine.wait_fault", { player }),
  lid_open: (player) => t("mine.wait_lid", { player }),
  board_lost: (player) => t("mine.wait_board", { player }),
  empty: (player) => t("mine.wait_empty", { player }),
  short: (player) => t("mine.wait_empty", { player }),
};

// Due after `before` in the queue; on a shared phone, which of its players.
function afterText(before) {
  if (game.mine.length > 1) return t("mine.shared_after", { player: game.me, before });
  return t("mine.after", { player: before });
}

// What this phone's own banner says: "Your turn", or what it owes in the words of "you". On a phone several players
// share, the name of the one the table asks in place of "you" (who holds it now), in one short line: "Ben: press
// twice" (the button's caption says a tap is for a player who cannot play).
function mineText(demand, trouble) {
  const shared = game.mine.length > 1;
  const wait = WAIT_FOR[trouble?.code];
  if (wait) return wait(shared ? game.me : t("mine.you"));
  if (shared) return demand ? demandText(demand) : t("mine.shared_turn", { player: game.me });
  if (!demand) return t("mine.play");
  const values = { n: demand.presses || demand.cards };
  if (demand.until_fire) return t("mine.until_fire", values);
  if (demand.presses) {
    return { 1: t("mine.once", values), 2: t("mine.twice", values) }[demand.presses] ?? t("mine.times", values);
  }
  return demand.cards === 1 ? t("mine.card_one", values) : t("mine.cards", values);
}

// The phone of the player being hit vibrates once per demand (where the phone can).
function alertMe(pending) {
  if (!pending) {
    game.alerted = null;
    return;
  }
  const key = JSON.stringify([game.data.id, pending.player, pending.cause, pending.by, game.data.table.demands.length]);
  if (key === game.alerted) return;
  game.alerted = key;
  vibrate(VIBRATE_ME);
}

// Who this phone presses for: the one of its players it is held for now (gamestate.js: game.me), while a game is in
// play; null: whoever the table asks.
export function phonePlayer() {
  return game.me && game.data && !game.data.scoreboard.over ? game.me : null;
}

// This phone belongs to `player`, or (null) is just watching: remembered by the phone, across games.
export function choosePlayer(player) {
  choosePlayers(player ? [player] : []);
}

// This phone belongs to `players` (several when they share it), or ([]) is just watching.
export function choosePlayers(players) {
  game.mine = game.mePicked = players;
  game.watching = players.length === 0;
  remember(ME_KEY, players[0]);
  remember(MINE_KEY, players.length > 1 ? JSON.stringify(players) : null);
  remember(WATCH_KEY, game.watching ? "yes" : null);
  $("me").value = players[0] ?? "";
  game.alerted = null;
  renderPrompt();
  for (const hook of hooks.seated) hook();
}

// ---- The table panel ----

// Built when the game, its players or its rules change; renderTablePanel() only updates it, so that a button is
// never replaced under a finger by an event from another phone.
function buildTableControls() {
  const data = game.data;
  const players = data?.players ?? [];
  // Remembered across games: the same phone is most often the same player's.
  const wanted = game.mePicked !== undefined ? game.mePicked : rememberedPlayers();
  game.mine = wanted.filter((name) => players.includes(name));
  $("me").replaceChildren(option("", t("table.me_nobody")), ...players.map((name) => option(name, name)));
  $("me").value = game.mine[0] ?? "";
  const picked = document.querySelector('#who input[name="who"]:checked')?.value;
  $("who").replaceChildren(...playerChips("who", players, picked));
  if (!players.includes(picked)) game.current = undefined; // then the picker follows whose turn it is again
  const multiple = Boolean(data?.house_rules.multiple_identical || data?.house_rules.pairs_one_effect);
  $("count-row").hidden = !multiple;
  $("count").replaceChildren(...Array.from({ length: MAX_COUNT }, (_, i) => option(String(i + 1), `× ${i + 1}`)));
  const groups = { cards: [], penalties: [], start: [], fix: [] };
  const offered = offeredDeclarations(data);
  // How many caught a forgotten UNO (each adds the penalty): 1 to every other player; the daemon names a number
  // beyond the players still in the round.
  $("catchers-row").hidden = !offered.some((spec) => Object.values(spec.fields).some((f) => f.page === "catchers"));
  const others = Math.max(players.length - 1, 1);
  $("catchers").replaceChildren(...Array.from({ length: others }, (_, i) => option(String(i + 1), String(i + 1))));
  for (const spec of offered) {
    groups[spec.group].push(declButton(spec, () => (spec.kind === "cancel" ? cancelNewest() : declare(spec.id))));
  }
  for (const [group, buttons] of Object.entries(groups)) $(`decl-${group}`).replaceChildren(...buttons);
  buildQuick(offered);
  const deck = data ? game.rules?.decks[data.ruleset] : null;
  $("first-card").replaceChildren(...(deck?.kinds ?? []).map((kind) => option(kind.id, kindName(kind.id))));
  game.firstCardOffered = Boolean(data && registryAction("first_card")?.rulesets.includes(data.ruleset));
}

// The players this phone remembers belonging to: its list when several share it, else its one player.
function rememberedPlayers() {
  try {
    const list = JSON.parse(stored(MINE_KEY) ?? "null");
    if (Array.isArray(list) && list.every((name) => typeof name === "string")) return list;
  } catch {
    // A list spoilt in the phone's storage: its first player below.
  }
  const one = stored(ME_KEY);
  return one ? [one] : [];
}

// A radio chip per player, in the group `name`, `picked` checked.
function playerChips(name, players, picked) {
  return players.map((player) => {
    const label = el("label", "chip");
    const input = el("input");
    input.type = "radio";
    input.name = name;
    input.value = player;
    input.checked = player === picked;
    label.append(input, el("span", "", player));
    return label;
  });
}

// ---- Declare from the top ----

// The ruleset's cards as big buttons under the launcher's button, "another card" last: one tap declares what this
// phone's player played. Built from the same list as the table panel's buttons, which stay for corrections.
const QUICK_LAST = "played";

function buildQuick(offered) {
  const cards = offered.filter((spec) => spec.group === "cards" && spec.kind !== "went_out");
  const quick = [...cards.filter((spec) => spec.id !== QUICK_LAST), ...cards.filter((spec) => spec.id === QUICK_LAST)];
  $("quick-cards").replaceChildren(...quick.map((spec) => declButton(spec, () => declareFromTop(spec.id))));
}

// Declared from the top, the page goes back to the top, where the prompt now says who owes or plays next.
async function declareFromTop(id) {
  if (await declare(id, quickPlayer())) window.scrollTo({ top: 0 });
}

// A declaration's button: its symbol (never colour alone) and its words, which renderTablePanel() and
// renderQuick() write in the language shown.
function declButton(spec, onClick) {
  const button = el("button", "decl");
  button.type = "button";
  button.dataset.kind = spec.id;
  button.append(el("span", "decl-symbol", spec.symbol), el("span", "decl-text"));
  button.firstChild.setAttribute("aria-hidden", "true");
  button.addEventListener("click", onClick);
  return button;
}

// Shown to a phone whose player is in the game: open on their own plain turn ("I played…"), else folded under
// "Played out of turn?"; hidden while an attack holds play, or with nothing to declare.
function renderQuick() {
  const box = $("quick");
  const data = game.data;
  const seated = Boolean(data && game.me && !data.scoreboard.over && data.players.includes(game.me));
  const mine = seated && phoneCall() === "turn";
  const nobody = !mine && seated && outOfTurn().length === 0; // all its players are asked or out
  box.hidden = !seated || nobody || Boolean(data.table.pending) || $("quick-cards").children.length === 0;
  if (box.hidden) return;
  if (mine) {
    box.dataset.mine = "true";
    box.open = true;
  } else if (box.dataset.mine) {
    delete box.dataset.mine;
    box.open = false;
  }
  $("quick-hint").textContent = mine ? t("quick.mine") : t("quick.hint");
  renderQuickWho(mine ? [] : outOfTurn());
  for (const button of $("quick-cards").children) {
    button.querySelector(".decl-text").textContent = declarationName(button.dataset.kind);
    button.disabled = game.sending;
  }
}

// Who of this phone's players may have played out of turn: those the table does not ask, still in the round.
function outOfTurn() {
  const out = game.data.table.out ?? [];
  return game.mine.filter((player) => player !== asked() && !out.includes(player));
}

// With several of them, which one played: a chip each, the first picked; made again only when they change.
function renderQuickWho(players) {
  $("quick-who").hidden = players.length < 2;
  const box = $("quick-who-chips");
  const shown = [...box.querySelectorAll("input")].map((input) => input.value);
  if (JSON.stringify(shown) === JSON.stringify(players)) return;
  const picked = box.querySelector("input:checked")?.value;
  box.replaceChildren(...playerChips("quick-who", players, players.includes(picked) ? picked : players[0]));
}

// Whom a card tapped at the top is declared for: on the phone's own turn the player the table asks; out of turn
// the phone's player picked (never the one asked, whose card it would then record as played out of turn).
function quickPlayer() {
  if (phoneCall() === "turn") return game.me;
  const players = outOfTurn();
  const picked = $("quick-who-chips").querySelector("input:checked")?.value;
  return players.includes(picked) ? picked : players[0];
}

function renderTablePanel() {
  const data = game.data;
  if (!data) return;
  const { table } = data;
  const owed = table.pending && !data.scoreboard.over;
  const parts = owed ? [demandText(table.pending)] : [];
  const player = { player: table.current };
  // While a press is owed, the game's own turn comes after it.
  const turn = owed ? t("table.turn_after", player) : t("table.turn", player);
  parts.push(table.current ? turn : t("table.no_turns"));
  if (table.out?.length) parts.push(t("table.out", { players: names(table.out) })); // knock-out play
  parts.push(table.direction === 1 ? t("table.clockwise") : t("table.counter_clockwise"));
  parts.push(t("table.dealer", { player: table.dealer }));
  $("table-status").textContent = parts.join(" · ");
  // The "who" picker follows the player being hit while an attack is open (they are the one who may stack on
  // it), else whose turn it is, until someone picks another player.
  const follows = table.pending?.player ?? table.current;
  if (follows !== game.current) {
    game.current = follows;
    const pick = follows ?? data.players[0];
    for (const input of document.querySelectorAll('#who input[name="who"]')) input.checked = input.value === pick;
  }
  // Knock-out play: who went out of the round plays no more until the next one.
  const out = new Set(table.out ?? []);
  for (const input of document.querySelectorAll('#who input[name="who"]')) input.disabled = out.has(input.value);
  for (const item of $("me").options) if (!item.value) item.textContent = t("table.me_nobody");
  for (const button of document.querySelectorAll("#panel-table .decl")) {
    button.querySelector(".decl-text").textContent = declarationName(button.dataset.kind);
    button.disabled = game.sending || data.scoreboard.over;
    if (button.dataset.kind === "cancel") button.hidden = table.demands.length === 0;
  }
  for (const item of $("first-card").options) item.textContent = kindName(item.value);
  // The card turned up counts once, before anyone plays or presses: once the round is under way it is gone.
  const firstCard = game.firstCardOffered && !table.under_way;
  $("first-card").parentElement.hidden = !firstCard;
  $("first-card-go").hidden = !firstCard;
  $("first-card-go").disabled = game.sending || data.scoreboard.over;
}

function whoPicked() {
  return document.querySelector('#who input[name="who"]:checked')?.value ?? game.data.table.current;
}

// The body of a declaration, each field filled as the registry says.
const FILL = {
  who: (who) => who,
  count: () => (!$("count-row").hidden && $("count").value !== "1" ? Number($("count").value) : undefined),
  catchers: () => ($("catchers").value !== "1" ? Number($("catchers").value) : undefined),
  first_card: () => $("first-card").value,
};

// `who`: the player named (from the top: this phone's own); else the one picked in the table panel. True once the
// daemon took it.
export async function declare(id, who = whoPicked()) {
  if (game.sending || !game.data) return false;
  const spec = id === "first_card" ? { ...registryAction("first_card"), preset: {} } : declarationButton(id);
  if (!spec) return false;
  const body = { kind: spec.kind };
  for (const [name, field] of Object.entries(spec.fields)) {
    const value = field.page === "preset" ? spec.preset[name] : FILL[field.page](who);
    if (value !== undefined) body[name] = value;
  }
  game.sending = true;
  showError("declare-error", "");
  renderTablePanel();
  renderQuick();
  try {
    const answer = await request("POST", "/api/attacks", body);
    if (answer.game) showGame(answer.game);
    offerUndo();
    return true;
  } catch (error) {
    showError("declare-error", refusal(error));
    toast(refusal(error)); // the panel's error line may be out of sight when declared from the top
    return false;
  } finally {
    game.sending = false;
    renderTablePanel();
    renderQuick();
  }
}

// ---- Safety nets: cancel asks first, a declaration can be undone ----

// "Cancel what is owed" drops the newest demand only (the daemon's rule); the question names it.
async function cancelNewest() {
  const newest = game.data?.table.demands.at(-1);
  if (newest && (await confirmed(t("confirm.cancel", { owed: demandText(newest) })))) declare("cancel");
}

// After a declaration, "Undo" is offered for a few seconds, or until the next press makes it too late.
const UNDO_SHOWN_MS = 8000;
let undoTimer;
function offerUndo() {
  $("undo-declaration").hidden = false;
  clearTimeout(undoTimer);
  undoTimer = setTimeout(hideUndo, UNDO_SHOWN_MS);
}

function hideUndo() {
  clearTimeout(undoTimer);
  $("undo-declaration").hidden = true;
}

export async function undoDeclaration() {
  if (game.sending) return;
  hideUndo();
  game.sending = true;
  showError("declare-error", "");
  try {
    const answer = await request("POST", "/api/game/undo-declaration", {});
    if (answer.game) showGame(answer.game);
  } catch (error) {
    showError("declare-error", refusal(error));
    toast(refusal(error)); // asked from the top, where the panel's error line is out of sight
  } finally {
    game.sending = false;
    renderTablePanel();
  }
}

// ---- Feed lines of game events ----

// Causes that only classic UNO has: their presses deal exact cards, each told by a launcher.dealt event.
const EXACT_CAUSES = new Set([
  "deal",
  "draw_two",
  "wild_draw_four",
  "challenge_failed",
  "illegal_wild_draw_four",
  "forgot_uno",
  "false_uno",
  "wrong_accusation",
  "wrong_card",
]);

function describeGame({ type, data }) {
  switch (type) {
    case "game.started":
      return ["🎲", t("feed.game_started", { players: names(data.players), ruleset: rulesetName(data.ruleset) })];
    case "attack.started":
      return declaredLine(data);
    case "attack.undone":
      return ["↶", t("feed.declaration_undone")];
    case "attack.progress": {
      if (!data.player) return null; // a press nobody owed, with turns not tracked: the press lines say it all
      if (EXACT_CAUSES.has(data.cause)) return null; // classic UNO: the launcher.dealt line says who got what
      const values = { player: data.player, cards: data.cards, cause: causeName(data.cause) };
      if (data.cards > 0) return [CARD, data.cards === 1 ? t("feed.took_one", values) : t("feed.took", values)];
      return ["○", t("feed.took_none", values)];
    }
    case "attack.finished":
      return ["✓", t("feed.attack_finished", { cause: causeName(data.cause) })];
    case "round.scored":
      return ["🏁", t("feed.round_scored", { round: data.round + 1, winner: data.winner })];
    case "round.undone":
      return ["↶", t("feed.round_undone", { round: data.round + 1 })];
    case "round.edited":
      return ["✎", t("feed.round_edited", { round: data.round + 1 })];
    case "game.finished":
      if (data.losers?.length) {
        return ["🏆", t("feed.game_finished_losers", { winners: names(data.winners), losers: names(data.losers) })];
      }
      return ["🏆", t("feed.game_finished", { winners: names(data.winners) })];
    case "launcher.dealt":
      if (data.dispensed !== data.requested) return ["⚠", t("feed.dealt_short", data)];
      if (data.dispensed === 1) return [CARD, t("feed.dealt_one", { player: data.player })];
      return [CARD, t("feed.dealt", { player: data.player, cards: data.dispensed })];
    default:
      return null;
  }
}

// A play out of turn is followed (the turn goes on from whoever played) and said: a jump-in with that house rule,
// else a slip the table may want to put right.
function declaredLine(data) {
  const line = declarationLine(data);
  if (!line || !data.out_of_turn) return line;
  const values = { player: data.out_of_turn };
  const note = data.jump_in ? t("feed.jumped_in", values) : t("feed.out_of_turn", values);
  return [line[0], `${line[1]} ${note}`];
}

function declarationLine({ kind, by, player, table }) {
  switch (kind) {
    case "cancel":
      return ["✕", t("feed.cancelled")];
    case "turn":
      return ["▶", t("feed.turn_set", { player })];
    case "deal":
      return [CARD, t("feed.deal")];
    case "first_card":
      return ["🂠", t("feed.first_card")];
    case "played":
      return ["▶", t("feed.played", { player: by })];
    case "challenge": {
      // Whether the Wild Draw Four was legal shows in what is now owed.
      const illegal = table?.demands.some((demand) => demand.cause === "illegal_wild_draw_four");
      const what = illegal ? t("decl.challenge_illegal") : t("decl.challenge_legal");
      return [illegal ? "!+4" : "?+4", t("feed.declared", { player, what })];
    }
    default: {
      const symbol = declarationButton(kind)?.symbol ?? "•";
      return [symbol, t("feed.declared", { player: by ?? player ?? "", what: declarationName(kind) })];
    }
  }
}

// ---- Start ----

function startGame() {
  const tabs = [...document.querySelectorAll(".tab")];
  for (const button of tabs) button.addEventListener("click", () => showTab(button.dataset.tab));
  // Arrow keys move between the tabs shown, as in every tab list.
  document.querySelector(".tabs").addEventListener("keydown", (e) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
    if (!step) return;
    const shown = tabs.filter((tab) => !tab.hidden);
    const next = shown[(shown.indexOf(e.target) + step + shown.length) % shown.length];
    showTab(next.dataset.tab);
    next.focus();
    e.preventDefault();
  });
  $("me").addEventListener("change", (e) => choosePlayer(e.target.value || null));
  game.watching = stored(WATCH_KEY) === "yes";
  $("first-card-go").addEventListener("click", () => declare("first_card"));
  $("undo-declaration").addEventListener("click", undoDeclaration);
  keepWithin($("prompt-me-text"), PROMPT_ME_LINES);
  loadGame().catch(() => renderGame());
}

view.show = showGame;
view.tab = showTab;
view.render = renderGame;

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  start: startGame,
  render: () => {
    buildTableControls(); // option texts in the new language
    renderGame();
  },
  describe: describeGame,
  event: onGameEvent,
  connected: () => loadGame().catch(() => {}),
};
