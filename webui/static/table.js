// The table screen (/table): a tablet or a TV beside the table shows, big, who must press or whose turn it is and
// who comes next, trouble at the launcher in the phones' words, the launcher's every press as it happens (the ring's
// tension, the button's kick or sag, what came out), the scores ranked, and the join code for a newcomer's camera.
// It speaks the call-outs of who must press, which phones leave to it unless asked.
// It has nothing to tap that acts: the game is played from the phones and the launcher. The entry module of
// table.html, in the language the phone page would have (webui/page.py); words from the same catalogues.
import { request, refusal } from "./api.js";
import { $, ui, t } from "./core.js";
import {
  asked,
  BLOCKED_BY,
  game,
  CARD,
  causeName,
  demandText,
  modeLine,
  names,
  showError,
  mayChangeTrouble,
  shownTrouble,
  troubleWords,
} from "./gamestate.js";
import { plug as motion, setTension } from "./motion.js";
import { callOut, say } from "./speech.js";
import { rankItems } from "./winner.js";

const GAME_RELOAD_MS = 100; // events close together are read with one GET /api/game
const OUTCOME_MS = 4000; // how long what came out stays on the launcher before its caption returns
const RECONNECT_MS = 5000;
// Events after which the game (whose turn, what is owed, the scores) is read again.
const GAME_CHANGES = /^(game|attack|round)\.|^launcher\.(missed|fired|jammed|empty|stopped|dealt)$/;

const screen = {
  lastId: 0, // the newest event received
  outcome: null, // timer that puts the caption back
  reload: null, // timer of the next GET /api/game
  faultCause: null, // /api/state's `fault_cause`: a FAULT is named with it
  troubleReads: 0, // only the newest read of the trouble is shown
  shown: "", // what the launcher is doing or what came out, on the button's caption for now
};

// ---- The prompt: who must press, whose turn, who comes next ----

function renderPrompt() {
  const data = game.data;
  let symbol = "";
  let text = t("tv.no_game");
  let cause = "";
  let next = "";
  if (data?.scoreboard.over) {
    symbol = "🏆";
    text = t("prompt.over", { winners: names(data.scoreboard.winners) });
  } else if (data) {
    const { pending, current, demands } = data.table;
    if (pending) {
      symbol = pending.until_fire ? "🔥" : pending.cards ? CARD : "✋";
      text = demandText(pending);
      cause = pending.by ? t("prompt.by", { cause: causeName(pending.cause), by: pending.by }) : causeName(pending.cause);
      next = nextWords(demands.slice(1).map((demand) => demand.player), current);
    } else {
      symbol = "▶";
      text = current ? t("prompt.turn", { player: current }) : t("prompt.free");
    }
  }
  $("tv-symbol").textContent = symbol;
  $("tv-prompt").textContent = text;
  $("tv-cause").textContent = cause;
  $("tv-cause").hidden = !cause;
  $("tv-next").textContent = next;
  $("tv-next").hidden = !next;
}

// Who presses after the one asked, then whose turn it is, as one phrase: "Next: Ann and Ben, then Dad's turn", or
// "Then Dad's turn" alone (never "Next: Then Dad's turn").
function nextWords(queue, current) {
  if (!queue.length) return current ? t("table.turn_after", { player: current }) : "";
  const players = names(queue);
  return current ? t("tv.next_then", { players, player: current }) : t("tv.next", { players });
}

// Trouble at the launcher (/api/state's `trouble`, or an empty hopper before a press fails), in the words of every
// phone's prompt: what happened, what to do, who presses after.
function renderTrouble() {
  const trouble = shownTrouble();
  renderDisc();
  $("tv-trouble").hidden = !trouble;
  if (!trouble) return;
  $("tv-trouble").dataset.code = trouble.code;
  const words = troubleWords(trouble, { cause: screen.faultCause });
  $("tv-trouble-what").textContent = words.what;
  $("tv-trouble-do").textContent = words.todo;
  $("tv-trouble-next").textContent = words.after;
}

function showState(state) {
  ui.trouble = state.trouble ?? null;
  ui.hopper = state.hopper;
  screen.faultCause = state.fault_cause;
  renderTrouble();
}

// Read after an event that may start or end trouble; of several reads, the newest one asked for wins.
async function refreshTrouble() {
  const read = ++screen.troubleReads;
  const state = await request("GET", "/api/state");
  if (read === screen.troubleReads) showState(state);
}

function renderScores() {
  const sb = game.data?.scoreboard;
  $("tv-no-game").hidden = Boolean(sb);
  $("tv-ranks").replaceChildren(...(sb ? rankItems(sb) : []));
  $("tv-mode").textContent = sb ? modeLine(sb) : "";
}

async function loadGame() {
  game.data = (await request("GET", "/api/game")).game;
  renderPrompt();
  renderTrouble(); // who presses after
  renderScores();
}

function reloadGame() {
  clearTimeout(screen.reload);
  screen.reload = setTimeout(() => loadGame().catch(() => {}), GAME_RELOAD_MS);
}

// ---- The launcher: each press as it happens ----

// What the launcher is doing now, on the button: whose press it works on, then (motion.js) what came out, big, then
// the caption says it until OUTCOME_MS have passed.
function showOutcome(text, lasts = true) {
  clearTimeout(screen.outcome);
  screen.shown = text;
  renderDisc();
  delete $("stage").dataset.jackpot;
  if (text && lasts) screen.outcome = setTimeout(() => showOutcome(""), OUTCOME_MS);
}

// While the launcher cannot take a press (a FAULT, the lid open, the board lost, an empty hopper) the disc is off as
// every phone's button is: grey, its caption saying why, not the red of a button waiting for a press.
function renderDisc() {
  const blocked = BLOCKED_BY[shownTrouble()?.code];
  $("stage").toggleAttribute("data-blocked", Boolean(blocked));
  $("tv-outcome").textContent = screen.shown || (blocked ? blocked() : "");
}

function onLauncher({ type, data }) {
  switch (type) {
    case "button.pressed": {
      // The press is credited to whoever the table asks (docs/ARCHITECTURE.md, the press path, step 5).
      const player = asked();
      showOutcome(player ? t("tv.pressing", { player }) : t("line.waiting"), false);
      break;
    }
    case "launcher.suspense":
      $("ring").dataset.suspense = "true";
      break;
    case "launcher.missed":
      delete $("ring").dataset.suspense;
      setTension(data.tension);
      showOutcome(t("line.nothing"));
      break;
    case "launcher.fired":
      delete $("ring").dataset.suspense;
      setTension(0);
      showOutcome(
        data.jackpot
          ? t("line.jackpot", { n: data.dispensed })
          : data.dispensed === 1
            ? t("line.card_one")
            : t("line.cards", { n: data.dispensed }),
      );
      if (data.jackpot) $("stage").dataset.jackpot = "true"; // app.css's shake and gold ring
      break;
    case "launcher.jammed":
    case "launcher.empty":
    case "hardware.fault":
      showOutcome(t("line.stopped")); // what it was, and what to do, is the trouble under the prompt
      break;
    case "hardware.ok":
      showOutcome(t("feed.ok"));
      break;
    case "hopper.changed":
    case "hopper.reloaded":
      ui.hopper = data; // emptied: told as the phones tell it, before a press fails
      renderTrouble();
      break;
    case "attack.started":
    case "attack.progress":
      callOut(data.table, true); // the table screen is the one that speaks (speech.js)
      break;
  }
}

// ---- The join code ----

// The invite needs a joined session: a screen that has not joined asks for the table PIN once, in place of the code
// (asked before the invite, whose refusal the browser would log as an error).
async function loadInvite() {
  const { role } = await request("GET", "/api/session");
  if (role !== "table" && role !== "admin") {
    $("tv-qr").hidden = $("tv-pin").hidden = true;
    $("tv-unlock").hidden = false;
    return;
  }
  try {
    const invite = await request("GET", "/api/invite");
    $("tv-qr").src = invite.join_qr;
    $("tv-qr").hidden = false;
    $("tv-link").textContent = invite.join_url;
    // Digits to read out across the table, where the invite carries them.
    $("tv-pin").textContent = invite.pin ?? "";
    $("tv-pin").hidden = !invite.pin;
    $("tv-unlock").hidden = true;
  } catch (error) {
    $("tv-qr").hidden = $("tv-pin").hidden = true;
    $("tv-link").textContent = refusal(error); // the launcher does not know its PIN yet, say
  }
}

async function unlock(pin) {
  showError("tv-unlock-error", "");
  try {
    await request("POST", "/api/session", { pin });
    if (stream) connect(); // from now on a joined screen's stream, which the daemon has more room for
  } catch (error) {
    showError("tv-unlock-error", refusal(error));
  }
  await loadInvite().catch(() => {});
}

// ---- The stream ----

let stream = null;

// Literal keys, for tests/test_i18n.py.
const CONN = {
  connecting: () => ["…", t("conn.connecting")],
  live: () => ["●", t("conn.live")],
  reconnecting: () => ["↻", t("conn.reconnecting")],
};

function renderConn(state) {
  $("conn").dataset.state = state;
  [$("conn-symbol").textContent, $("conn-text").textContent] = CONN[state]();
}

function connect() {
  stream?.close();
  const source = new EventSource(`/api/events?last_event_id=${screen.lastId}`);
  stream = source;
  source.onopen = () => {
    renderConn("live");
    loadGame().catch(() => {});
    refreshTrouble().catch(() => {}); // what changed while the stream was down
  };
  source.onerror = () => {
    renderConn("reconnecting");
    if (source.readyState === EventSource.CLOSED) setTimeout(() => source === stream && connect(), RECONNECT_MS);
  };
  source.onmessage = (message) => {
    const event = JSON.parse(message.data);
    screen.lastId = event.id;
    onLauncher(event);
    motion.event(event, true);
    if (mayChangeTrouble(event)) refreshTrouble().catch(() => {});
    if (GAME_CHANGES.test(event.type)) reloadGame();
    if (event.type === "pins.changed") loadInvite().catch(() => {});
  };
}

// ---- Start ----

async function start() {
  const sent = $("strings");
  ui.strings = JSON.parse(sent.textContent);
  ui.lang = sent.dataset.lang;
  renderConn("connecting");
  document.addEventListener("click", () => say(""), { once: true }); // Safari speaks only after a tap has
  $("tv-qr").alt = t("invite.qr");
  $("tv-unlock").addEventListener("submit", (event) => {
    event.preventDefault();
    unlock($("tv-unlock-pin").value.trim()).then(() => $("tv-unlock").reset());
  });
  const state = await request("GET", "/api/state").catch(() => null);
  screen.lastId = state?.last_event_id ?? 0; // what came before is in the state and the game read below
  setTension(state?.tension);
  if (state) showState(state);
  // Opened from an invite's link with /table in place of /: joined at once, the link out of the address bar.
  const pin = /^#pin=(\d+)$/.exec(location.hash)?.[1];
  if (pin) {
    history.replaceState(null, "", location.pathname);
    await unlock(pin);
  } else {
    await loadInvite().catch(() => {});
  }
  connect();
}

document.addEventListener("DOMContentLoaded", () => start().catch(() => renderConn("reconnecting")));
