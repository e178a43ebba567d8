// Putting the table right from the top, on every phone: the forgotten-UNO penalty and Undo of the last
// declaration, each one tap right under the button and a confirmation, where the table panel's own buttons are
// screens down. The declaring itself is game.js's, the same request as from the table panel.
import { confirmed } from "./confirm.js";
import { $, ui, t } from "./core.js";
import { declarationName, declare, offeredDeclarations, undoDeclaration } from "./game.js";
import { game, el, option } from "./gamestate.js";

// The ruleset's "forgot UNO" penalty (UNO Attack's presses, classic's cards), or undefined where none is offered.
function penalty() {
  return offeredDeclarations().find((spec) => spec.kind === "uno_penalty" || spec.kind === "forgot_uno");
}

function render() {
  const data = game.data;
  const on = Boolean(ui.joined && data && !data.scoreboard.over);
  $("prompt-fix").hidden = !on;
  if (!on) return;
  $("fix-penalty").hidden = !penalty();
  $("fix-penalty").textContent = t("fix.penalty");
  $("fix-undo").textContent = t("fix.undo");
}

// Who most likely forgot: the player who played just before whose turn it is now (the one left with one card).
function lastToPlay() {
  const { table, players } = game.data;
  const seats = table.in_play?.length ? table.in_play : players;
  const at = seats.indexOf(table.current);
  return at < 0 ? seats[0] : seats[(at - table.direction + seats.length) % seats.length];
}

// The question names the penalty and asks who forgot, the likeliest one picked; "Yes" declares it for them.
async function askPenalty() {
  const spec = penalty();
  if (!spec || !game.data) return;
  const question = el("label", "fix-question", t("fix.penalty_question", { penalty: declarationName(spec.id) }));
  const who = el("select");
  const out = game.data.table.out ?? [];
  who.append(...game.data.players.filter((name) => !out.includes(name)).map((name) => option(name, name)));
  who.value = lastToPlay();
  question.append(who);
  if (await confirmed(question)) declare(spec.id, who.value);
}

async function askUndo() {
  if (await confirmed(t("fix.undo_question"))) undoDeclaration();
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  start: () => {
    $("fix-penalty").addEventListener("click", askPenalty);
    $("fix-undo").addEventListener("click", askUndo);
  },
  render,
  seated: render,
};
