// The press as a moment, on every phone: while the launcher works on a press (the motor running, or a suspense
// pause) the ring races; when it ends, the outcome is staged big on the button for STAGED_MS ("Phew — nothing!",
// "+3 cards!", a jackpot), then the button is the button again. Driven only by the launcher's own events, as they
// come: nothing is held back or made up here. The button also kicks when cards fly and sags for a miss (a jackpot
// has app.js's own celebration); app.css moves nothing for people who asked for less motion. Phones that can
// vibrate (not iPhones: Safari has no navigator.vibrate) already do for their own fire and their own demand.
import { $, t } from "./core.js";

const STAGED_MS = 1500; // how long an outcome stays on the button
const RUNNING_MAX_MS = 20000; // a press whose end never came (a lost stream) stops racing after this

let timer;

// null: a jackpot, whose shake is not to be covered by the last outcome's movement.
function showOutcome(outcome) {
  const stage = $("stage");
  delete stage.dataset.outcome;
  if (!outcome) return;
  void stage.offsetWidth; // the same outcome twice in a row moves the button again
  stage.dataset.outcome = outcome;
}

function running() {
  const stage = $("stage");
  stage.dataset.moment = "running";
  delete stage.dataset.staged;
  clearTimeout(timer);
  timer = setTimeout(settle, RUNNING_MAX_MS);
}

// The outcome on the button: `kind` (missed, fired, jackpot, trouble) for the look, `words` to read.
function staged(kind, words) {
  const stage = $("stage");
  stage.dataset.moment = "outcome";
  stage.dataset.staged = kind;
  const outcome = $("press-outcome"); // the phone's button; the table screen tells the outcome in its own line
  if (outcome) outcome.textContent = words;
  clearTimeout(timer);
  timer = setTimeout(settle, STAGED_MS);
}

function settle() {
  const stage = $("stage");
  delete stage.dataset.moment;
  delete stage.dataset.staged;
  const outcome = $("press-outcome");
  if (outcome) outcome.textContent = "";
}

function cardsWords(n) {
  return n === 1 ? t("stage.cards_one") : t("stage.cards", { n });
}

function onEvent({ type, data }, fresh) {
  if (!fresh) return;
  switch (type) {
    case "button.pressed":
      running();
      break;
    case "launcher.missed":
      showOutcome("missed");
      staged("missed", t("stage.phew"));
      break;
    case "launcher.fired":
      showOutcome(data.jackpot ? null : "fired");
      if (data.jackpot) staged("jackpot", t("stage.jackpot_cards", { n: data.dispensed }));
      else staged("fired", cardsWords(data.dispensed));
      break;
    case "launcher.dealt":
      staged("fired", cardsWords(data.dispensed));
      break;
    case "launcher.jammed":
      staged("trouble", data.reason === "stuck_at_exit" ? t("stage.stuck") : t("stage.jammed"));
      break;
    case "launcher.empty":
      staged("trouble", data.dispensed > 0 ? cardsWords(data.dispensed) : t("stage.empty"));
      break;
    case "launcher.stopped":
    case "hardware.fault":
      if ($("stage").dataset.moment === "running") staged("trouble", t("stage.stopped"));
      break;
  }
}

// What this module adds to the page's hooks (core.js; main.js adds them).
// The tension (0..1) after misses: the ring pulses faster and thicker as it rises (2.4 s per pulse when calm, 0.4 s
// at the edge), and a flame for each third of it says the same to an eye that tells neither colour nor motion.
export function setTension(value) {
  const tension = Math.min(1, Math.max(0, Number(value) || 0));
  const ring = $("ring");
  ring.style.setProperty("--pulse", `${(2.4 - 2 * tension).toFixed(2)}s`);
  ring.style.setProperty("--tension", tension.toFixed(2));
  $("tension").textContent = "🔥".repeat(Math.ceil(tension * 3));
}

export const plug = { event: onEvent };
