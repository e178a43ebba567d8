// What every module of the page shares: the element lookup, the page's state (`ui`), the hooks through which the
// other modules join in, translation, remembered choices and a few small helpers. Imports nothing of the page.
// Every visible text comes from the catalogues in static/i18n/.

const TOAST_MS = 3000;
const TOAST_STEP_PX = 8; // how finely a free place for the toast is looked for

export const $ = (id) => document.getElementById(id);

// main.js adds each module's hooks to these lists before the page starts (DOMContentLoaded).
export const hooks = {
  render: [], // () => void: redraw in the language just chosen
  describe: [], // (event) => [symbol, text] | null: feed lines for their events
  event: [], // (event, fresh) => void: every event from the stream
  connected: [], // ({joined}) => void: the stream (re)connected (joined: only because the phone joined)
  start: [], // () => void | Promise: once, after the catalogue is loaded; the stream opens when all have settled
  refused: [], // (code) => void: a call was refused for want of a session (join_required, admin_required)
  state: [], // (state) => void: each /api/state read, on every (re)connection
  seated: [], // () => void: the game shown, this phone's role or who it is changed (game.js, access.js)
};

export const ui = {
  lang: "en",
  strings: {},
  conn: "connecting", // connecting | live | reconnecting
  busy: false, // a press from this phone is in flight
  joined: null, // this phone has joined the table (true / false) once its role is known (access.js)
  admin: false, // it joined with the admin PIN (access.js): a FAULT's Reset is offered at the top
  hopper: null, // the hopper's count, {loaded, dispensed, remaining}, once known
  fault: null, // message of the latched hardware fault, if any
  faultCause: null, // why it latched (launcher/press/outcomes.py FaultCause), worded by app.js
  trouble: null, // what stops the table now, /api/state's `trouble`: told in the prompt (game.js) and on the button
  feed: [], // events shown in the feed, newest first
  lastId: 0, // id of the newest event received
  received: 0, // events received so far: a state read asked for before the latest of them may be older
  snapshotId: 0, // last_event_id of the newest /api/state: older events are already in the state we show
  shuffle: null, // {number, profile, commitment, presses} of the shuffle being played
  profiles: null, // [{name, fire_rate, ...}] from /api/profiles
  picked: false, // the host chose a profile in the select since the last shuffle started
  starting: false, // a new shuffle is being requested from this phone
  suspense: null, // timer that ends a suspense the outcome did not follow
};

// ---- Objects keyed by names people typed ----

// A player or team may be called "__proto__", "constructor" or "toString": a map keyed by names starts empty of
// Object's own keys (byName), and a name is looked up only among a map's own keys (own).
export const byName = () => Object.create(null);
export const own = (object, name) => (object != null && Object.hasOwn(object, name) ? object[name] : undefined);

// ---- Translation ----

// t("feed.fired", {press: 13, dispensed: 4}) fills the {press} and {dispensed} placeholders.
export function t(key, params = {}) {
  const text = ui.strings[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (placeholder, name) => (name in params ? String(params[name]) : placeholder));
}

// Each profile's name and one-line description. The keys are literal so that tests/test_i18n.py can check them.
const PROFILE_TEXTS = {
  classic: () => [t("profile.classic"), t("profile.classic_about")],
  gentle: () => [t("profile.gentle"), t("profile.gentle_about")],
  brutal: () => [t("profile.brutal"), t("profile.brutal_about")],
  pattern: () => [t("profile.pattern"), t("profile.pattern_about")],
  extreme: () => [t("profile.extreme"), t("profile.extreme_about")],
  custom: () => [t("profile.custom"), t("profile.custom_about")],
};
export const PROFILE_NAMES = Object.keys(PROFILE_TEXTS);

export function profileName(name) {
  return PROFILE_TEXTS[name]?.()[0] ?? name;
}

export function profileAbout(name) {
  return PROFILE_TEXTS[name]?.()[1] ?? "";
}

// Numbers in the reader's language: 34.9%, 1.16, 0.5%.
export function percent(value) {
  return new Intl.NumberFormat(ui.lang, { style: "percent", maximumFractionDigits: 1 }).format(value);
}

export function decimal(value, digits = 2) {
  return new Intl.NumberFormat(ui.lang, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(value);
}

// ---- Remembered choices ----

// localStorage can be switched off (private modes, strict settings): then a choice is just not remembered, and
// holds until the page is reloaded. An empty value forgets the key.
export function stored(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

export function remember(key, value) {
  try {
    if (value) localStorage.setItem(key, value);
    else localStorage.removeItem(key);
  } catch {
    // Nothing to do: see above.
  }
}

// ---- Small helpers ----

export function span(className, text) {
  const el = document.createElement("span");
  el.className = className;
  el.textContent = text;
  return el;
}

export function vibrate(pattern) {
  try {
    navigator.vibrate?.(pattern);
  } catch {
    // Not every browser may vibrate (or at all times): the feed and the sounds still tell.
  }
}

// What a person may tap next, and what the page marks as the words to read now (the prompt): the toast never
// lies over one of these.
const KEPT_CLEAR = "button, a[href], input, select, summary, textarea, [data-toast-clear]";

// At the bottom of the screen, unless a control is there (the Undo of the round just saved): then, going up, in the
// first band of the screen as tall as the toast with no control in it. Placed again as the page scrolls or moves
// under it, for as long as it shows.
function placeToast() {
  const box = $("toast");
  if (!box || box.hidden) return; // the table screen has no toast
  box.style.top = box.style.bottom = ""; // its own place, at the bottom
  const { left, right, top: lowest, height } = box.getBoundingClientRect();
  const controls = [...document.querySelectorAll(KEPT_CLEAR)]
    .map((control) => control.getBoundingClientRect())
    .filter((at) => at.width > 0 && at.bottom > 0 && at.top < innerHeight && at.left < right && left < at.right);
  const free = (top) => controls.every((at) => at.bottom <= top || at.top >= top + height);
  for (let top = lowest; top >= 0; top -= TOAST_STEP_PX) {
    if (!free(top)) continue;
    if (top !== lowest) [box.style.top, box.style.bottom] = [`${top}px`, "auto"];
    return;
  }
}
addEventListener("scroll", placeToast, { passive: true });
// What is under it moved (a card shown, a panel opened). Watched only once a toast has shown: the table screen
// has no toast.
const moved = new ResizeObserver(placeToast);

let toastTimer;
export function toast(text) {
  const box = $("toast");
  box.textContent = text;
  box.hidden = false;
  moved.observe(document.body);
  placeToast();
  clearTimeout(toastTimer);
  toastTimer = setTimeout(clearToast, TOAST_MS);
}

// The toast gone at once: what it said is out of date (a game's end, which the winner card tells, came after it).
export function clearToast() {
  clearTimeout(toastTimer);
  $("toast").hidden = true;
}
