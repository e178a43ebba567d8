// Past games (docs/HISTORY.md): the list of ended games, newest first, a page at a time; one game's rounds and final
// scores; the leaderboard over a period and mode; the players known across games, also offered when a game is set
// up; and, for a joined phone, the downloads.
import { request } from "./api.js";
import { $, ui, t, toast } from "./core.js";
import { el, option, modeName, scoringOption, tableParts } from "./gamestate.js";
import { setup, buildSeats, mostSeats, renderSeatsAround } from "./setup.js";

const past = {
  games: [], // summaries shown, newest first
  next: null, // next_before of the last page, or null
  open: null, // the game shown in full, or null
  players: [], // /api/history/players
  board: null, // /api/history/leaderboard
  period: "evening",
  mode: "",
  modesKey: "", // the language and modes the mode choices were drawn for
};
const PERIODS = {
  evening: () => t("past.period_evening"),
  month: () => t("past.period_month"),
  all: () => t("past.period_all"),
};
const DAY = { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" };

async function loadPast(more = false) {
  const query = more && past.next !== null ? `&before=${past.next}` : "";
  const page = await request("GET", `/api/history/games?limit=10${query}`);
  past.games = more ? [...past.games, ...page.games] : page.games;
  past.next = page.next_before;
  renderPastList();
}

async function loadBoard() {
  const mode = past.mode ? `&mode=${past.mode}` : "";
  past.board = await request("GET", `/api/history/leaderboard?period=${past.period}${mode}`);
  renderBoard();
}

async function loadPlayers() {
  past.players = (await request("GET", "/api/history/players")).players;
  renderPlayers();
  renderKnown();
}

async function openPast(id) {
  past.open = await request("GET", `/api/history/games/${id}`);
  renderPastGame();
}

function when(ts) {
  return new Date(ts * 1000).toLocaleString(ui.lang, DAY);
}

function pastLine(game) {
  const scores = game.players.length && Object.entries(game.totals).map(([side, total]) => `${side} ${total}`);
  const outcome = game.outcome === "abandoned"
    ? t("past.abandoned")
    : t("past.won_by", { winners: game.winners.join(", ") });
  return [when(game.started_ts), modeName(game.mode), scores.join(" · "), outcome].join(" — ");
}

function renderPastList() {
  $("past-none").hidden = past.games.length > 0;
  $("past-more").hidden = past.next === null;
  $("past-list").replaceChildren(
    ...past.games.map((game) => {
      const item = el("li");
      const button = el("button", "past-open", pastLine(game));
      button.type = "button";
      button.addEventListener("click", () => openPast(game.id).catch(() => toast(t("past.failed"))));
      item.append(button);
      return item;
    }),
  );
}

function fillTable(id, heads, rows, name) {
  $(id).replaceChildren(...tableParts(heads, rows, name));
}

function renderPastGame() {
  const game = past.open;
  $("past-list-view").hidden = game !== null;
  $("past-game").hidden = game === null;
  if (game === null) return;
  const board = game.scoreboard;
  $("past-game-title").textContent = pastLine(game);
  fillTable("past-totals", [t("past.side"), t("past.total")], board.sides.map((side) => [side, board.totals[side]]), 0);
  $("past-rounds").replaceChildren(
    ...board.rounds.map((round) => {
      const points = Object.entries(round.points).map(([side, n]) => `${side} ${n}`).join(" · ");
      return el("li", "", t("past.round", { n: round.index + 1, winner: round.winner, points }));
    }),
  );
}

function renderBoard() {
  const players = past.board?.players ?? [];
  fillTable(
    "board",
    [t("past.rank"), t("past.player"), t("past.games"), t("past.wins"), t("past.rounds_won"), t("past.per_round")],
    players.map((p) => [p.rank, p.player, p.games, p.wins, p.rounds_won, p.points_per_round]),
    1,
  );
  $("board-none").hidden = players.length > 0;
  $("board").hidden = players.length === 0; // headings over no row read as an empty grid
}

function renderPlayers() {
  fillTable(
    "past-players",
    [t("past.player"), t("past.games"), t("past.wins"), t("past.rounds_won"), t("past.per_round"),
      t("past.presses"), t("past.cards"), t("past.drought")],
    past.players.map((p) => [p.player, p.games, p.wins, p.rounds_won, p.points_per_round, p.presses, p.cards,
      p.longest_drought]),
    0,
  );
  $("past-players").hidden = past.players.length === 0;
}

// The known players as chips under the seats of the new-game form: a tap puts the name in the first empty seat.
function renderKnown() {
  const seated = new Set(setup.seats.map((name) => name.trim().toLowerCase()));
  const offered = past.players.filter((p) => !seated.has(p.player.toLowerCase()));
  $("known-row").hidden = offered.length === 0;
  $("known").replaceChildren(
    ...offered.map((p) => {
      const chip = el("button", "chip", p.player);
      chip.type = "button";
      chip.addEventListener("click", () => seatKnown(p.player));
      return chip;
    }),
  );
}

function seatKnown(name) {
  const empty = setup.seats.findIndex((seat) => !seat.trim());
  if (empty >= 0) setup.seats[empty] = name;
  else if (setup.seats.length < mostSeats()) setup.seats.push(name);
  else return;
  buildSeats();
  renderSeatsAround();
  renderKnown();
}

function renderChoices() {
  $("board-period").replaceChildren(...Object.entries(PERIODS).map(([p, text]) => option(p, text())));
  $("board-period").value = past.period;
  renderModeChoices();
}

// The modes of the registry of scoring options (rules.scoring), drawn again once the rules are read: before, only
// the one chosen.
function renderModeChoices() {
  const modes = scoringOption("mode")?.choices.map((choice) => choice.value) ?? (past.mode ? [past.mode] : []);
  const key = JSON.stringify([ui.lang, modes]);
  if (key === past.modesKey) return;
  past.modesKey = key;
  $("board-mode").replaceChildren(option("", t("past.every_mode")), ...modes.map((m) => option(m, modeName(m))));
  $("board-mode").value = past.mode;
}

// The downloads need a joined phone: shown exactly while access.js shows the role chip (joined as table or admin).
function renderExport() {
  $("past-export").hidden = $("role").hidden;
}

function renderPast() {
  renderChoices();
  renderPastList();
  renderPastGame();
  renderBoard();
  renderPlayers();
  renderKnown();
  renderExport();
}

function refreshPast() {
  Promise.all([loadPast(), loadBoard(), loadPlayers()]).catch(() => {});
}

function startPast() {
  $("past-more").addEventListener("click", () => loadPast(true).catch(() => toast(t("past.failed"))));
  $("past-back").addEventListener("click", () => {
    past.open = null;
    renderPastGame();
  });
  $("board-period").addEventListener("change", () => {
    past.period = $("board-period").value;
    loadBoard().catch(() => {});
  });
  $("board-mode").addEventListener("change", () => {
    past.mode = $("board-mode").value;
    loadBoard().catch(() => {});
  });
  $("seats").addEventListener("input", renderKnown);
  new MutationObserver(renderExport).observe($("role"), { attributes: true, attributeFilter: ["hidden"] });
  renderPast();
  refreshPast();
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  start: startPast,
  render: renderPast,
  seated: renderModeChoices, // the game's rules were read
  connected: refreshPast,
  // A game that ends (or is replaced, or undone after its end) changes the history.
  event: ({ type }, fresh) => {
    if (fresh && ["game.finished", "game.started", "round.undone", "round.edited"].includes(type)) refreshPast();
  },
};
