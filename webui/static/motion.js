// A short movement of the big button for every outcome, on every phone: a kick when cards fly, a sag for a miss
// (a jackpot has app.js's own celebration). The stage keeps the last outcome in data-outcome; app.css moves the
// button once per change and not at all for people who asked for less motion. Phones that can vibrate (not
// iPhones: Safari has no navigator.vibrate) already do for their own fire and their own demand.
import { $ } from "./core.js";

// null: a jackpot, whose shake is not to be covered by the last outcome's movement.
function showOutcome(outcome) {
  const stage = $("stage");
  delete stage.dataset.outcome;
  if (!outcome) return;
  void stage.offsetWidth; // the same outcome twice in a row moves the button again
  stage.dataset.outcome = outcome;
}

function onEvent({ type, data }, fresh) {
  if (!fresh) return;
  if (type === "launcher.missed") showOutcome("missed");
  else if (type === "launcher.fired") showOutcome(data.jackpot ? null : "fired");
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = { event: onEvent };
