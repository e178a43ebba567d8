// The first steps of a phone that has just joined the table, at the top of the page until it has chosen: who it is
// among the players of the game in play (or just watching); with no game in play, a new game in one tap. The
// choice is game.js's "I am", remembered by the phone and changeable there. Players sharing a phone pick each of
// their names ("We share this phone"), and the phone then acts for whichever of them the table asks.
import { $, ui, t } from "./core.js";
import { choosePlayer, choosePlayers } from "./game.js";
import { game, el, view } from "./gamestate.js";

const welcome = {
  starting: false, // "Start a game" was tapped on this page: the new game's form is open, ask no more
  players: "", // the players the buttons were made for
  sharing: false, // "We share this phone" was tapped: a name's button picks it or leaves it, "Done" chooses them
};

// "who": a game is in play and this phone has not said who it is; "start": no game yet; null: nothing to ask (a game
// that has ended has its winner card instead, with "Play again": winner.js).
function step() {
  if (!ui.joined || !game.rules || game.watching) return null;
  if (game.data) return game.data.scoreboard.over || game.mine.length ? null : "who";
  return welcome.starting ? null : "start";
}

function renderWelcome() {
  const now = step();
  $("welcome").hidden = !now;
  if (!now) return;
  const asking = now === "who";
  $("welcome-title").textContent = asking ? t("welcome.who") : t("welcome.no_game");
  $("welcome-hint").textContent = asking ? t("welcome.who_hint") : t("welcome.no_game_hint");
  $("welcome-start").hidden = asking;
  $("welcome-share").hidden = !asking || welcome.sharing;
  $("welcome-done").hidden = !asking || !welcome.sharing;
  $("welcome-done").disabled = sharedPicks().length === 0;
  // Made again only when the players change, so that a button is never replaced under a finger.
  const players = asking ? game.data.players : [];
  if (JSON.stringify(players) !== welcome.players) showPlayers(players);
}

function showPlayers(players) {
  welcome.players = JSON.stringify(players);
  $("welcome-players").replaceChildren(
    ...players.map((player) => {
      const button = el("button", "pill", player);
      button.type = "button";
      button.dataset.player = player;
      if (welcome.sharing) button.setAttribute("aria-pressed", "false");
      button.addEventListener("click", () => (welcome.sharing ? toggle(button) : chosen([player])));
      return button;
    }),
  );
}

// The card goes once answered: back to the top, where this phone's prompt and the button now speak to its player.
function chosen(players) {
  welcome.sharing = false;
  if (players.length) choosePlayers(players);
  else choosePlayer(null);
  window.scrollTo({ top: 0 });
}

// Players sharing the phone: each name's button is pressed or not; "Done" takes those pressed.
function share() {
  welcome.sharing = true;
  for (const button of $("welcome-players").children) button.setAttribute("aria-pressed", "false");
  renderWelcome();
  $("welcome-players").querySelector("button")?.focus();
}

function toggle(button) {
  button.setAttribute("aria-pressed", String(button.getAttribute("aria-pressed") !== "true"));
  renderWelcome();
}

function sharedPicks() {
  const pressed = $("welcome-players").querySelectorAll('button[aria-pressed="true"]');
  return [...pressed].map((button) => button.dataset.player);
}

// Straight to the new game's form, its first name ready to type.
function startGame() {
  welcome.starting = true;
  renderWelcome();
  view.tab("new");
  $("seats").querySelector("input")?.focus();
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  start: () => {
    $("welcome-start").addEventListener("click", startGame);
    $("welcome-watch").addEventListener("click", () => chosen([]));
    $("welcome-share").addEventListener("click", share);
    $("welcome-done").addEventListener("click", () => chosen(sharedPicks()));
  },
  render: renderWelcome,
  seated: renderWelcome,
};
