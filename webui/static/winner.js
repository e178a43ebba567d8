// The end of a game on every phone, watchers' too: a card at the top of the page with the winners big and every
// side's total ranked as the game's mode ranks them (ties share a place), and one big "Play again, same players"
// that starts the same game again (POST /api/games with the ended game's players, ruleset, house rules and
// scoring). Closed, it stays closed on this page; it comes back when the page is opened again, for as long as the
// ended game is the last one; a new game, from any phone, takes it away.
import { request, refusal } from "./api.js";
import { $, ui, t, clearToast } from "./core.js";
import { game, view, el, names, number, modeLine, ranked, rulesetName, showError } from "./gamestate.js";

const MEDALS = ["🥇", "🥈", "🥉"];

const card = {
  closed: null, // the game whose card was closed on this page
  seen: null, // the game last shown here, and whether it was over: {id, over}
  sending: false, // "Play again" is on its way
};

// The ended game again, as it was set up: the same players in the same seats, ruleset, house rules and scoring.
function againBody(data) {
  const body = {
    players: data.players,
    ruleset: data.ruleset,
    house_rules: data.house_rules,
    mode: data.mode,
    target: data.target,
    track_turns: data.track_turns,
  };
  if (data.teams) body.teams = data.teams;
  if (data.final) body.final = data.final;
  return body;
}

// Every side's line, first to last: its place (a medal for the first three), its name (a team's members under it;
// who busted or went out marked in words), its total. The table screen (table.js) shows the same lines, also while
// the game goes on: there, as long as every side stands level (before the first round), nobody has a place yet.
export function rankItems(sb) {
  const losers = new Set(sb.losers ?? []);
  const out = new Set(Object.keys(Array.isArray(sb.eliminated) ? {} : (sb.eliminated ?? {})));
  const ranks = ranked(sb);
  const placed = sb.over || ranks.some(({ place }) => place > 1);
  return ranks.map(({ side, total, place }) => {
    const item = el("li", "winner-rank");
    item.dataset.side = side;
    const where = el("span", "winner-place");
    if (placed) {
      item.dataset.place = String(place);
      if (place === 1) item.dataset.first = "true";
      const medal = MEDALS[place - 1];
      where.textContent = medal ?? t("winner.place", { place: number(place) });
      // A medal is a picture named by its place (a bare span may not carry a name); a place in words reads itself.
      if (medal) {
        where.setAttribute("role", "img");
        where.setAttribute("aria-label", t("winner.place", { place: number(place) }));
      }
    }
    const who = el("span", "winner-side", side);
    if (sb.teams?.[side]) who.append(el("span", "members", names(sb.teams[side])));
    if (losers.has(side)) who.append(el("span", "badge", `💥 ${t("scores.lost")}`));
    else if (out.has(side)) who.append(el("span", "badge", `✗ ${t("scores.out")}`));
    item.append(where, who, el("span", "winner-total", number(total)));
    return item;
  });
}

function renderWinner() {
  const box = $("winner-card");
  const data = game.data;
  const over = Boolean(data?.scoreboard.over);
  // The game ending while this page watched it: the card is brought into view, on every phone at once.
  const ended = over && card.seen?.id === data.id && !card.seen.over;
  card.seen = data ? { id: data.id, over } : null;
  box.hidden = !over || card.closed === data.id;
  if (box.hidden) return;
  const sb = data.scoreboard;
  const winners = sb.winners;
  $("winner-title").textContent = t("winner.title");
  $("winner-names").textContent = names(winners);
  $("winner-line").textContent =
    winners.length > 1 ? t("winner.wins_shared", { winners: names(winners) }) : t("winner.wins", { winners: names(winners) });
  $("winner-ranks").replaceChildren(...rankItems(sb));
  $("winner-mode").textContent = modeLine(sb);
  // Starting a game needs the table PIN: a phone that has not joined sees the result only.
  const joined = ui.joined === true;
  $("winner-again").hidden = $("winner-other").hidden = !joined;
  $("winner-again").disabled = card.sending;
  $("winner-again").setAttribute("aria-busy", String(card.sending));
  $("winner-again-what").hidden = !joined;
  $("winner-again-what").textContent = `${names(data.players)} · ${rulesetName(data.ruleset)}`;
  if (ended) {
    clearToast(); // the last round's "Round saved" would lie over the card's totals
    box.scrollIntoView({ block: "start" });
  }
}

async function playAgain() {
  const data = game.data;
  if (card.sending || !data?.scoreboard.over) return;
  card.sending = true;
  showError("winner-error", "");
  renderWinner();
  try {
    const answer = await request("POST", "/api/games", againBody(data));
    game.tab = "table";
    view.show(answer.game);
  } catch (error) {
    showError("winner-error", refusal(error));
  } finally {
    card.sending = false;
    renderWinner();
  }
}

function closeCard() {
  card.closed = game.data?.id ?? null;
  renderWinner();
}

// Other players or other rules: the new game's form, as the ended game left it.
function otherGame() {
  closeCard();
  view.tab("new");
  $("game").scrollIntoView({ block: "start" });
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  start: () => {
    $("winner-again").addEventListener("click", playAgain);
    $("winner-other").addEventListener("click", otherGame);
    $("winner-close").addEventListener("click", closeCard);
  },
  render: renderWinner,
  seated: renderWinner,
};
