// The page's one entry module (index.html loads it): it imports the others, adds their hooks to core.js's lists
// in the order the page has always called them, and starts the page once the document is parsed.
// Native ES modules, no build step: each file imports what it uses and exports what others use; no globals.
import * as access from "./access.js";
import { start } from "./app.js";
import * as care from "./care.js";
import * as fixes from "./fixes.js";
import * as confirm from "./confirm.js";
import { hooks } from "./core.js";
import * as game from "./game.js";
import * as history from "./history.js";
import * as invite from "./invite.js";
import * as motion from "./motion.js";
import * as power from "./power.js";
import * as score from "./score.js";
import * as setup from "./setup.js";
import * as sound from "./sound.js";
import * as tournament from "./tournament.js";
import * as verify from "./verify.js";
import * as welcome from "./welcome.js";
import * as winner from "./winner.js";

for (const { plug } of [game, score, setup, access, verify, power, history, tournament, care, invite, welcome, winner, sound, motion, confirm, fixes]) {
  for (const [name, hook] of Object.entries(plug)) hooks[name].push(hook);
}

// A module runs after the document is parsed, before DOMContentLoaded.
document.addEventListener("DOMContentLoaded", start);
