// Tournaments (docs/GAME.md#tournaments): the partner rotation, four players a table, shared by the tables of a
// home over its MQTT broker. A joined phone sets one up (players, tables); every phone shows who sits where in each
// table's next round, the rounds of every table and the standings per player, live: tournament.set_up and
// tournament.round come on the stream whichever table they were made at. This table's round is scored here, and
// taken back here (to be scored again: every table takes the new version). The admin sees the broker's link, the
// current tournament's join code to read out to another table's admin, and joins another table's with its code.
import { access } from "./access.js";
import { request, refusal } from "./api.js";
import { confirmed } from "./confirm.js";
import { $, t, toast, ui } from "./core.js";
import { el } from "./gamestate.js";

const tour = {
  table: "", // this table's name
  current: null, // GET /api/tournament's tournament, or null
  loading: null, // the read in flight
  awaiting: null, // the id of a tournament joined whose setup has not come yet
  code: null, // the current tournament's join code (the admin's)
  link: null, // /api/state's mqtt: the broker's link, or null without a broker
};

const EVENTS = new Set(["tournament.set_up", "tournament.round"]);

// Refusals of a tournament's own (launcher/game/rotation.py, webui/tournament_api.py), by code; literal keys.
const REFUSED = {
  seat_count: () => t("tournament.refused_seats"),
  same_name: () => t("tournament.refused_names"),
  bad_name: () => t("tournament.refused_names"),
  unknown_table: () => t("tournament.refused_table", { table: tour.table }),
  bad_tables: () => t("tournament.refused_table", { table: tour.table }),
  not_next_round: () => t("tournament.refused_stale"),
  round_scored: () => t("tournament.refused_stale"),
  bad_points: () => t("tournament.refused_points"),
  bad_code: () => t("tournament.refused_code"),
  no_round: () => t("tournament.refused_stale"),
};

function refusedText(error) {
  return REFUSED[error.body?.error?.code]?.() ?? refusal(error);
}

function lines(text) {
  return text
    .split(/[\n,，、]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

async function load() {
  tour.loading ??= request("GET", "/api/tournament")
    .then((answer) => {
      tour.table = answer.table;
      tour.current = answer.tournament;
      tour.awaiting = answer.awaiting;
      renderTournament();
      return loadAdmin();
    })
    .catch(() => {}) // offline: the next connection reads it again
    .finally(() => {
      tour.loading = null;
    });
  return tour.loading;
}

function teamsText(seats) {
  return t("tournament.teams", { a: seats[0], b: seats[2], c: seats[1], d: seats[3] });
}

function renderTables(current) {
  const list = $("tour-tables");
  list.replaceChildren(
    ...current.tables.map((table) => {
      const item = el("li", table.table === tour.table ? "tour-here" : "");
      if (table.next_round === null) {
        item.append(el("span", "", t("tournament.done", { table: table.table, cycles: current.cycles })));
      } else {
        const rounds = current.rounds_per_table;
        const head = t("tournament.next", { table: table.table, cycle: table.cycle, round: table.cycle_round, rounds });
        item.append(el("strong", "", head), el("span", "tour-teams", teamsText(table.seats)));
      }
      return item;
    }),
  );
}

function renderScoreForm(current) {
  const mine = current.tables.find((table) => table.table === tour.table);
  const form = $("tour-score");
  form.hidden = !mine || mine.next_round === null;
  if (form.hidden) return;
  const fields = $("tour-points");
  if (fields.dataset.round === `${current.id}.${mine.next_round}`) return; // what is typed stays
  fields.dataset.round = `${current.id}.${mine.next_round}`;
  fields.replaceChildren(
    ...mine.seats.map((player, seat) => {
      const label = el("label", "field");
      const input = el("input");
      input.type = "number";
      input.inputMode = "numeric";
      input.step = "1";
      input.value = "0";
      input.dataset.player = player;
      input.id = `tour-points-${seat}`;
      label.htmlFor = input.id;
      label.append(el("span", "", player), input);
      return label;
    }),
  );
  $("tour-score-title").textContent = t("tournament.score", { cycle: mine.cycle, round: mine.cycle_round });
}

function renderStandings(current) {
  const table = $("tour-standings");
  const head = el("tr");
  head.append(el("th", "", t("tournament.player")), el("th", "", t("tournament.points")));
  head.append(el("th", "", t("tournament.rounds_played")));
  table.replaceChildren(
    head,
    ...current.standings.map((s) => {
      const row = el("tr");
      row.append(el("td", "", s.player), el("td", "num", String(s.points)), el("td", "num", String(s.rounds)));
      return row;
    }),
  );
}

function renderRounds(current) {
  const shown = [...current.rounds].reverse();
  $("tour-rounds").replaceChildren(
    ...shown.map((r) => {
      const points = Object.entries(r.points)
        .map(([player, value]) => `${player} ${value}`)
        .join(" · ");
      const item = el("li", "", t("tournament.round_line", { table: r.table, cycle: r.cycle, round: r.cycle_round, points }));
      if (r.version > 1) item.append(el("em", "", ` ${t("tournament.corrected")}`));
      if (r.table === tour.table && ui.joined) {
        const undo = el("button", "pill tour-take-back", t("tournament.take_back"));
        undo.type = "button";
        undo.addEventListener("click", () => takeBack(r.number));
        item.append(undo);
      }
      return item;
    }),
  );
}

// The admin's part: the broker's link, the code to share, joining another table's tournament.
async function loadAdmin() {
  if (access.role !== "admin") return renderAdmin();
  const [state, code] = await Promise.all([
    request("GET", "/api/state").catch(() => null),
    request("GET", "/api/tournament/code").catch(() => null),
  ]);
  if (state) tour.link = state.mqtt;
  tour.code = code?.code ?? null;
  renderAdmin();
}

function linkText(link) {
  if (link === null) return t("tournament.link_none");
  if (link.state === "connected") return t("tournament.link_connected");
  const words = { seconds: link.for_s, reason: link.reason ?? "" };
  return link.state === "refused" ? t("tournament.link_refused", words) : t("tournament.link_trying", words);
}

function renderAdmin() {
  const admin = access.role === "admin";
  $("tour-admin").hidden = !admin;
  $("tour-awaiting").hidden = tour.current !== null || tour.awaiting === null;
  if (!admin) return;
  $("tour-link").textContent = linkText(tour.link);
  $("tour-link").className = tour.link && tour.link.state !== "connected" ? "error" : "hint";
  $("tour-share").hidden = tour.code === null || tour.current === null;
  $("tour-code").textContent = (tour.code ?? "").replaceAll("-", " ");
}

async function join(event) {
  event.preventDefault();
  $("tour-join-error").hidden = true;
  try {
    const answer = await request("POST", "/api/tournaments/join", { code: $("tour-join-code").value });
    tour.current = answer.tournament;
    tour.awaiting = answer.awaiting;
    $("tour-join-code").value = "";
    renderTournament();
    loadAdmin();
  } catch (error) {
    $("tour-join-error").textContent = refusedText(error);
    $("tour-join-error").hidden = false;
  }
}

async function takeBack(number) {
  if (!(await confirmed(t("tournament.take_back_question", { round: number })))) return;
  try {
    const answer = await request("DELETE", `/api/tournament/rounds/${number}`);
    tour.current = answer.tournament;
    renderTournament();
    toast(t("tournament.taken_back", { round: number }));
  } catch (error) {
    toast(refusedText(error));
    load();
  }
}

function renderTournament() {
  const current = tour.current;
  renderAdmin();
  $("tour-none").hidden = current !== null;
  $("tour-view").hidden = current === null;
  if ($("tour-tables-input").value === "" && tour.table) $("tour-tables-input").value = tour.table;
  $("tour-tables-hint").textContent = t("tournament.tables_hint", { table: tour.table });
  if (current === null) return;
  $("tour-export").hidden = !ui.joined; // every name and score: for the table (the API asks for a joined phone)
  renderTables(current);
  renderScoreForm(current);
  renderStandings(current);
  renderRounds(current);
}

async function setUp(event) {
  event.preventDefault();
  const body = { players: lines($("tour-players").value), tables: lines($("tour-tables-input").value) };
  $("tour-error").hidden = true;
  try {
    const answer = await request("POST", "/api/tournaments", body);
    tour.current = answer.tournament;
    $("tour-setup").open = false;
    renderTournament();
  } catch (error) {
    $("tour-error").textContent = refusedText(error);
    $("tour-error").hidden = false;
  }
}

async function score(event) {
  event.preventDefault();
  const mine = tour.current?.tables.find((table) => table.table === tour.table);
  if (!mine) return;
  const points = {};
  for (const input of $("tour-points").querySelectorAll("input")) points[input.dataset.player] = Number(input.value);
  try {
    const answer = await request("POST", "/api/tournament/rounds", { number: mine.next_round, points });
    tour.current = answer.tournament;
    renderTournament();
    toast(t("tournament.saved"));
  } catch (error) {
    toast(refusedText(error));
    load();
  }
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  start: () => {
    $("tour-setup-form").addEventListener("submit", setUp);
    $("tour-score").addEventListener("submit", score);
    $("tour-join-form").addEventListener("submit", join);
  },
  state: (state) => {
    tour.link = state.mqtt ?? null;
    renderAdmin();
  },
  connected: () => load(),
  event: ({ type }, fresh) => {
    if (fresh && EVENTS.has(type)) load();
  },
  describe: ({ type, data }) =>
    type === "tournament.round" ? ["🏆", t("feed.tournament_round", { table: data.table, round: data.number })] : null,
  render: () => renderTournament(),
  seated: () => {
    renderTournament();
    loadAdmin();
  },
};
