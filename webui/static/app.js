// The phone page of the UNO launcher: one big button, the shuffle and its sealed seed, a live feed, the hopper's count,
// a new-shuffle control, the rules of each profile and a language switch. The game at the table (game.js, score.js,
// setup.js) joins in through `hooks`.
// Vanilla JS with no build step. Every visible text comes from the catalogues in static/i18n/.
"use strict";

const LANGS = ["en", "zh-Hans", "zh-Hant"];
const LANG_KEY = "uno-launcher.lang";
const FEED_MAX = 30;
const HISTORY_EVENTS = 60; // replayed when the page opens: about two events per feed line
const TOAST_MS = 3000;
const JACKPOT_MS = 2400; // how long the stage celebrates a jackpot
const SUSPENSE_GRACE_MS = 15000; // a suspense the outcome never followed (lost stream) ends after pause + this
const SHORT_HASH = 12; // hex characters of the commitment shown before "…"
const VIBRATE_FIRE = 120;
const VIBRATE_JACKPOT = [90, 60, 90, 60, 240];

const $ = (id) => document.getElementById(id);

// The other scripts add to these lists while they load; the page starts once all of them have (DOMContentLoaded).
const hooks = {
  render: [], // () => void: redraw in the language just chosen
  describe: [], // (event) => [symbol, text] | null: feed lines for their events
  event: [], // (event, fresh) => void: every event from the stream
  connected: [], // () => void: the stream (re)connected, re-read what might have been missed
  start: [], // () => void: once, after the catalogue is loaded
  refused: [], // (code) => void: a call was refused for want of a session (join_required, admin_required)
  state: [], // (state) => void: each /api/state read, on every (re)connection
};

const ui = {
  lang: "en",
  strings: {},
  conn: "connecting", // connecting | live | reconnecting
  busy: false, // a press from this phone is in flight
  hopper: null, // the hopper's count, {loaded, dispensed, remaining}, once known
  fault: null, // message of the latched hardware fault, if any
  feed: [], // events shown in the feed, newest first
  lastId: 0, // id of the newest event received
  snapshotId: 0, // last_event_id of the newest /api/state: older events are already in the state we show
  shuffle: null, // {number, profile, commitment, presses} of the shuffle being played
  profiles: null, // [{name, fire_rate, ...}] from /api/profiles
  picked: false, // the host chose a profile in the select since the last shuffle started
  starting: false, // a new shuffle is being requested from this phone
  suspense: null, // timer that ends a suspense the outcome did not follow
};

// ---- Translation ----

// t("feed.fired", {press: 13, dispensed: 4}) fills the {press} and {dispensed} placeholders.
function t(key, params = {}) {
  const text = ui.strings[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (placeholder, name) => (name in params ? String(params[name]) : placeholder));
}

// The first Chinese or English entry of the browser's preferred languages decides; English otherwise.
function guessLang() {
  for (const tag of navigator.languages || [navigator.language]) {
    const lower = tag.toLowerCase();
    const base = lower.split("-")[0];
    if (base === "zh") {
      const traditional = !lower.includes("-hans") && /-(hant|tw|hk|mo)\b/.test(lower);
      return traditional ? "zh-Hant" : "zh-Hans";
    }
    if (base === "en") return "en";
  }
  return "en";
}

// localStorage can be switched off (private modes, strict settings): then a choice is just not remembered, and
// holds until the page is reloaded. An empty value forgets the key.
function stored(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function remember(key, value) {
  try {
    if (value) localStorage.setItem(key, value);
    else localStorage.removeItem(key);
  } catch {
    // Nothing to do: see above.
  }
}

async function setLang(code) {
  const response = await fetch(document.body.dataset.i18nBase + code + ".json");
  if (!response.ok) throw new Error(`catalogue ${code}: HTTP ${response.status}`);
  ui.strings = await response.json();
  ui.lang = code;
  document.documentElement.lang = code;
  $("lang").value = code;
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  render();
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
const PROFILE_NAMES = Object.keys(PROFILE_TEXTS);

function profileName(name) {
  return PROFILE_TEXTS[name]?.()[0] ?? name;
}

function profileAbout(name) {
  return PROFILE_TEXTS[name]?.()[1] ?? "";
}

// Numbers in the reader's language: 34.9%, 1.16, 0.5%.
function percent(value) {
  return new Intl.NumberFormat(ui.lang, { style: "percent", maximumFractionDigits: 1 }).format(value);
}

function decimal(value, digits = 2) {
  return new Intl.NumberFormat(ui.lang, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(value);
}

// ---- Rendering ----

function render() {
  renderConn();
  renderButton();
  renderShuffle();
  renderHopper();
  renderFault();
  renderFeed();
  renderProfileChoice();
  renderRules();
  for (const hook of hooks.render) hook();
}

function renderConn() {
  const [symbol, text] = {
    connecting: ["…", t("conn.connecting")],
    live: ["●", t("conn.live")],
    reconnecting: ["↻", t("conn.reconnecting")],
  }[ui.conn];
  $("conn").dataset.state = ui.conn;
  $("conn-symbol").textContent = symbol;
  $("conn-text").textContent = text;
}

function renderButton() {
  const button = $("press");
  button.disabled = ui.busy;
  button.setAttribute("aria-busy", String(ui.busy));
  $("press-caption").textContent = ui.busy ? t("button.busy") : t("button.caption");
}

function renderShuffle() {
  const shuffle = ui.shuffle;
  $("shuffle-title").textContent = shuffle
    ? t("shuffle.title", { shuffle: shuffle.number, profile: profileName(shuffle.profile) })
    : t("shuffle.unknown");
  $("shuffle-presses").textContent = !shuffle
    ? ""
    : shuffle.presses === 1
      ? t("shuffle.presses_one")
      : t("shuffle.presses", { presses: decimal(shuffle.presses, 0) });
  $("seal").hidden = !shuffle?.commitment;
  $("seal-short").textContent = shuffle?.commitment ? shuffle.commitment.slice(0, SHORT_HASH) + "…" : "";
  $("seal-full").textContent = shuffle?.commitment ?? "";
}

// The profile select: one option per profile, its description below. It follows the shuffle being played until
// the host picks another profile.
function renderProfileChoice() {
  const select = $("profile");
  const names = ui.profiles?.map((p) => p.name) ?? PROFILE_NAMES;
  const wanted = ui.picked ? select.value : ui.shuffle?.profile;
  select.replaceChildren(
    ...names.map((name) => {
      const option = document.createElement("option");
      option.value = name;
      option.textContent = profileName(name);
      return option;
    }),
  );
  if (names.includes(wanted)) select.value = wanted;
  $("profile-about").textContent = profileAbout(select.value);
  $("host-ends").textContent = ui.shuffle ? t("host.ends", { shuffle: ui.shuffle.number }) : "";
  const button = $("new-shuffle");
  button.disabled = ui.starting;
  button.setAttribute("aria-busy", String(ui.starting));
}

// The rules page of the schedule: what each profile does in the long run, one table per profile.
function renderRules() {
  const active = ui.shuffle?.profile;
  $("rules-tables").replaceChildren(...(ui.profiles ?? []).map((p) => profileTable(p, p.name === active)));
}

function profileTable(profile, active) {
  const table = document.createElement("table");
  table.className = "profile-table";
  table.dataset.profile = profile.name;
  if (active) table.dataset.active = "true";
  const caption = document.createElement("caption");
  const title = span("profile-title", profileName(profile.name));
  caption.append(title);
  if (active) caption.append(span("profile-active", t("rules.active")));
  caption.append(span("profile-about", profileAbout(profile.name)));
  const rows = [
    [t("rules.fire_rate"), percent(profile.fire_rate)],
    [t("rules.cards_per_press"), decimal(profile.cards_per_press)],
    [t("rules.cards_per_fire"), decimal(profile.cards_per_fire)],
    [t("rules.cards_range"), t("rules.range", { min: profile.min_cards, max: profile.max_cards })],
    [t("rules.longest_drought"), decimal(profile.longest_drought, 0)],
    [t("rules.max_fires_in_row"), decimal(profile.max_fires_in_row, 0)],
    [t("rules.jackpot"), profile.jackpot_probability > 0 ? percent(profile.jackpot_probability) : t("rules.none")],
    [t("rules.pause"), profile.pause_probability > 0 ? percent(profile.pause_probability) : t("rules.none")],
  ];
  const body = document.createElement("tbody");
  for (const [label, value] of rows) {
    const row = document.createElement("tr");
    const head = document.createElement("th");
    head.scope = "row";
    head.textContent = label;
    const cell = document.createElement("td");
    cell.textContent = value;
    row.append(head, cell);
    body.append(row);
  }
  table.append(caption, body);
  return table;
}

function renderHopper() {
  const hopper = ui.hopper;
  $("hopper-text").textContent = hopper ? t("hopper.level", hopper) : t("hopper.unknown");
  const bar = $("hopper-bar");
  bar.max = Math.max(1, hopper?.loaded ?? 1);
  bar.value = hopper?.remaining ?? 0;
}

function renderFault() {
  $("fault").hidden = !ui.fault;
  $("fault-text").textContent = ui.fault ? t("fault.banner", { message: ui.fault }) : "";
}

// One feed line: [symbol, text], or null for events that have no line of their own.
// The symbol makes each kind recognisable without relying on colour.
function describe({ type, data }) {
  switch (type) {
    case "button.pressed":
      if (data.deal) {
        // Classic UNO: the press deals exact cards, outside the shuffle's count of presses.
        return ["✋", data.source === "button" ? t("feed.deal_button", data) : t("feed.deal_web", data)];
      }
      return ["✋", data.source === "button" ? t("feed.pressed_button", data) : t("feed.pressed_web", data)];
    case "launcher.missed":
      return ["○", t("feed.missed", data)];
    case "launcher.fired":
      if (data.jackpot) return ["★", t("feed.jackpot", data)];
      return [`🃏\uFE0F×${data.dispensed}`, data.dispensed === 1 ? t("feed.fired_one", data) : t("feed.fired", data)];
    case "launcher.suspense":
      return ["…", t("feed.suspense", data)];
    case "shuffle.started":
      return ["▶", t("feed.shuffle_started", { shuffle: data.shuffle, profile: profileName(data.profile) })];
    case "shuffle.ended":
      return ["■", t("feed.shuffle_ended", data)];
    case "launcher.jammed":
      return ["⚠", data.reason === "stuck_at_exit" ? t("feed.stuck", data) : t("feed.jammed", data)];
    case "launcher.stopped":
      return ["■", data.reason === "lid" ? t("feed.stopped_lid", data) : t("feed.stopped", data)];
    case "launcher.lid":
      return data.open ? ["⊓", t("feed.lid_open")] : ["⊔", t("feed.lid_closed")];
    case "launcher.empty":
      return ["⚠", t("feed.empty", data)];
    case "button.ignored":
      if (data.reason === "fault") return ["⚠", t("feed.ignored_fault")];
      if (data.reason === "lid_open") return ["⊓", t("feed.ignored_lid")];
      return ["⏳", t("feed.ignored_busy")];
    case "hardware.fault":
      return ["⚠", t("feed.fault", data)];
    case "hardware.ok":
      return ["✓", t("feed.ok")];
    case "hopper.reloaded":
      return ["↻", t("feed.reloaded", data)];
    default:
      for (const hook of hooks.describe) {
        const line = hook({ type, data });
        if (line) return line;
      }
      return null;
  }
}

function renderFeed() {
  $("feed").replaceChildren(...ui.feed.map(feedItem));
  $("feed-none").hidden = ui.feed.length > 0;
}

const CLOCK = { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" };

function feedItem(event) {
  const [symbol, text] = describe(event);
  const li = document.createElement("li");
  li.dataset.type = event.type;
  if (event.data.press !== undefined && event.data.press !== null) li.dataset.press = event.data.press;
  if (event.data.round !== undefined) li.dataset.round = event.data.round; // the game's
  if (event.data.shuffle !== undefined) li.dataset.shuffle = event.data.shuffle;
  if (event.data.jackpot) li.dataset.jackpot = "true";
  const when = document.createElement("time");
  const date = new Date(event.ts * 1000);
  when.dateTime = date.toISOString();
  when.textContent = date.toLocaleTimeString(ui.lang, CLOCK);
  li.append(span("feed-symbol", symbol), span("feed-text", text), when);
  if (event.type === "shuffle.ended") li.append(revealed(event.data));
  return li;
}

// Under a shuffle.ended line: the revealed seed, and its full record (what `uno-launcher verify` checks).
function revealed({ shuffle, seed }) {
  const extra = span("feed-extra", "");
  const code = document.createElement("code");
  code.className = "seed";
  code.textContent = seed;
  const record = document.createElement("a");
  record.className = "record";
  record.href = `/api/shuffles/${encodeURIComponent(shuffle)}`;
  record.download = `uno-shuffle-${shuffle}.json`;
  record.textContent = t("feed.record");
  extra.append(span("seed-label", t("feed.seed")), code, record);
  return extra;
}

function span(className, text) {
  const el = document.createElement("span");
  el.className = className;
  el.textContent = text;
  return el;
}

// The ring pulses faster as the tension (0..1) rises: 2.4 s per pulse when calm, 0.4 s at the edge.
function setTension(value) {
  const tension = Math.min(1, Math.max(0, Number(value) || 0));
  const ring = $("ring");
  ring.style.setProperty("--pulse", `${(2.4 - 2 * tension).toFixed(2)}s`);
  ring.style.setProperty("--tension", tension.toFixed(2));
}

// A suspense pause: the ring pulses at its fastest until the outcome arrives.
function setSuspense(pauseMs) {
  clearTimeout(ui.suspense);
  ui.suspense = null;
  const ring = $("ring");
  if (pauseMs === null) {
    delete ring.dataset.suspense;
    return;
  }
  ring.dataset.suspense = "true";
  ui.suspense = setTimeout(() => setSuspense(null), Number(pauseMs || 0) + SUSPENSE_GRACE_MS);
}

let jackpotTimer;
function celebrateJackpot() {
  const stage = $("stage");
  delete stage.dataset.jackpot;
  void stage.offsetWidth; // restart the animation when jackpots follow each other
  stage.dataset.jackpot = "true";
  $("jackpot-badge").hidden = false;
  clearTimeout(jackpotTimer);
  jackpotTimer = setTimeout(() => {
    delete stage.dataset.jackpot;
    $("jackpot-badge").hidden = true;
  }, JACKPOT_MS);
}

function vibrate(pattern) {
  try {
    navigator.vibrate?.(pattern);
  } catch {
    // Not every browser may vibrate (or at all times): the feed and the sounds still tell.
  }
}

let toastTimer;
function toast(text) {
  const box = $("toast");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), TOAST_MS);
}

// ---- Talking to the daemon ----

// A JSON request with any method; the answer's body is {} when it is not JSON. Rejects only when the daemon is
// unreachable. A refusal for want of a session goes to hooks.refused too (access.js asks the phone to join).
async function sendJson(method, path, payload) {
  const init = { method, headers: {} };
  if (payload !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(payload);
  }
  const response = await fetch(path, init);
  const body = await response.json().catch(() => ({}));
  const code = body.error?.code;
  if (code === "join_required" || code === "admin_required") for (const hook of hooks.refused) hook(code);
  return { response, body };
}

// Refusals about PINs and sessions in the reader's language (with the daemon's numbers). Literal keys for
// tests/test_i18n.py.
const REFUSALS = {
  join_required: () => t("refused.join_required"),
  admin_required: () => t("refused.admin_required"),
  wrong_pin: (error) => (error.tries_left > 0 ? t("refused.wrong_pin", error) : t("refused.too_many_tries", error)),
  too_many_tries: (error) => t("refused.too_many_tries", error),
  bad_pin: () => t("refused.bad_pin"),
  attacks_open: (error) => t("refused.attacks_open", error),
};

// Otherwise the daemon's own message (it names the player, card or setting), else the status.
function refusal(response, body) {
  const error = body.error;
  return REFUSALS[error?.code]?.(error) ?? error?.message ?? t("game.failed", { status: response.status });
}

// A press for the player this phone belongs to (game.js: phonePlayer), else for whoever the table asks, as the
// launcher's own button does. When the table asks someone else, the phone asks first: "Press for Dee?".
async function press(forPlayer = phonePlayer()) {
  if (ui.busy) return;
  ui.busy = true;
  askPressFor(null);
  renderButton();
  try {
    const { response, body } = await sendJson("POST", "/api/press", forPlayer ? { player: forPlayer } : {});
    const code = response.status === 409 ? body.error?.code : undefined;
    if (response.ok) {
      setTension(body.tension);
      if (body.dispensed > 0) vibrate(body.jackpot ? VIBRATE_JACKPOT : VIBRATE_FIRE); // this phone's own fire
    } else if (code === "busy") toast(t("toast.busy"));
    else if (code === "lid_open") toast(t("feed.ignored_lid"));
    else if (code === "not_your_press" && body.error.asked) askPressFor(body.error.asked);
    else toast(refusal(response, body));
  } catch {
    toast(t("toast.offline"));
  } finally {
    ui.busy = false;
    renderButton();
  }
}

// "Press for Dee?" under the button, or hidden (null). Yes presses for Dee; the question goes with any other press.
function askPressFor(player) {
  $("press-for").hidden = !player;
  $("press-for").dataset.player = player ?? "";
  if (!player) return;
  $("press-for-text").textContent = t("press_for.ask", { player });
  $("press-for-yes").textContent = t("press_for.yes", { player });
  $("press-for-yes").focus();
}

// Someone refilled the hopper: it is full again, at the size it was loaded with.
async function reload() {
  try {
    const { response, body } = await sendJson("POST", "/api/hopper", { cards: ui.hopper?.loaded ?? 112 });
    if (!response.ok) toast(refusal(response, body));
  } catch {
    toast(t("toast.offline"));
  }
}

// End the shuffle being played (its seed is revealed) and start a new one with the chosen profile.
async function newShuffle() {
  if (ui.starting) return;
  ui.starting = true;
  renderProfileChoice();
  try {
    const { response, body } = await sendJson("POST", "/api/shuffles", { profile: $("profile").value });
    if (response.ok && body.shuffle) {
      ui.picked = false;
      showShuffle(body.shuffle);
      toast(t("toast.shuffle_started", { shuffle: body.shuffle.number, profile: profileName(body.shuffle.profile) }));
    } else {
      toast(refusal(response, body));
    }
  } catch {
    toast(t("toast.offline"));
  } finally {
    ui.starting = false;
    renderProfileChoice();
  }
}

// A shuffle from an event or an answer; an older one (a late answer) never replaces a newer one, except from
// /api/state (`latest`), which may follow a daemon that started afresh.
function showShuffle(shuffle, latest = false) {
  if (!latest && ui.shuffle && shuffle.number < ui.shuffle.number) return;
  const changed = shuffle.number !== ui.shuffle?.number || shuffle.profile !== ui.shuffle?.profile;
  ui.shuffle = shuffle;
  renderShuffle();
  if (changed) {
    renderProfileChoice();
    renderRules();
  }
}

// The whole commitment to the clipboard; where the page may not use the clipboard (plain http on the home
// network is not a secure context), the text is selected for the phone's own Copy.
async function copyCommitment() {
  const full = $("seal-full");
  try {
    await navigator.clipboard.writeText(full.textContent);
    toast(t("toast.copied"));
  } catch {
    getSelection().selectAllChildren(full);
    toast(t("toast.selected"));
  }
}

// Called on every (re)connection of the stream, so a restarted daemon's state replaces what we showed.
async function refreshState() {
  const response = await fetch("/api/state");
  if (!response.ok) throw new Error(`state: HTTP ${response.status}`);
  const state = await response.json();
  ui.snapshotId = state.last_event_id ?? ui.snapshotId;
  ui.hopper = state.hopper;
  ui.fault = state.fault;
  setTension(state.tension);
  if (state.shuffle) showShuffle(state.shuffle, true);
  renderHopper();
  renderFault();
  for (const hook of hooks.state) hook(state);
  return state;
}

// The profiles and their long-run figures, for the select and the rules page.
async function loadProfiles() {
  const response = await fetch("/api/profiles");
  if (!response.ok) throw new Error(`profiles: HTTP ${response.status}`);
  const body = await response.json();
  ui.profiles = body.profiles;
  renderProfileChoice();
  renderRules();
}

function onEvent(event) {
  ui.lastId = event.id;
  const data = event.data;
  // Events the last /api/state already holds (the history replayed when the page opens) only add feed lines.
  const fresh = event.id > ui.snapshotId;
  switch (event.type) {
    case "button.pressed":
      if (fresh && ui.shuffle && data.press) {
        showShuffle({ ...ui.shuffle, presses: Math.max(ui.shuffle.presses, data.press) });
      }
      break;
    case "launcher.suspense":
      setSuspense(data.pause_ms);
      break;
    case "launcher.missed":
      setSuspense(null);
      setTension(data.tension);
      break;
    case "launcher.fired":
      setSuspense(null);
      setTension(0);
      if (fresh && data.jackpot) celebrateJackpot();
      break;
    case "launcher.jammed":
    case "launcher.empty":
    case "launcher.stopped":
      setSuspense(null);
      break;
    case "shuffle.started":
      if (fresh) {
        showShuffle({ number: data.shuffle, profile: data.profile, commitment: data.commitment, presses: 0 });
        loadProfiles().catch(() => {}); // the custom profile may have changed
      }
      break;
    case "hopper.changed":
    case "hopper.reloaded":
      if (fresh) ui.hopper = data;
      renderHopper();
      break;
    case "hardware.fault":
      setSuspense(null);
      ui.fault = data.message;
      renderFault();
      break;
    case "hardware.ok":
      ui.fault = null;
      renderFault();
      break;
  }
  for (const hook of hooks.event) hook(event, fresh);
  if (describe(event)) {
    ui.feed.unshift(event);
    ui.feed.length = Math.min(ui.feed.length, FEED_MAX);
    // Add one line rather than redraw the list, so screen readers announce only the new line.
    const list = $("feed");
    list.prepend(feedItem(event));
    while (list.children.length > FEED_MAX) list.lastElementChild.remove();
    $("feed-none").hidden = true;
  }
}

// The browser itself sends Last-Event-ID when it reconnects; the query only matters for a new stream.
function connect() {
  const source = new EventSource(`/api/events?last_event_id=${ui.lastId}`);
  source.onopen = () => {
    ui.conn = "live";
    renderConn();
    refreshState().catch(() => {}); // the stream's own error handler reports a lost connection
    for (const hook of hooks.connected) hook();
  };
  source.onerror = () => {
    ui.conn = "reconnecting";
    renderConn();
    // The browser retries after network errors by itself (sending Last-Event-ID), but gives up for good
    // after an HTTP error status, e.g. from a proxy while the daemon restarts: then start a new stream.
    if (source.readyState === EventSource.CLOSED) setTimeout(connect, 5000);
  };
  source.onmessage = (message) => onEvent(JSON.parse(message.data));
}

// ---- Start ----

async function start() {
  $("press").addEventListener("click", () => press());
  $("press-for-yes").addEventListener("click", () => press($("press-for").dataset.player));
  $("press-for-no").addEventListener("click", () => askPressFor(null));
  $("reload").addEventListener("click", reload);
  $("new-shuffle").addEventListener("click", newShuffle);
  $("seal-copy").addEventListener("click", copyCommitment);
  $("profile").addEventListener("change", () => {
    ui.picked = true;
    $("profile-about").textContent = profileAbout($("profile").value);
  });
  $("lang").addEventListener("change", (e) => {
    remember(LANG_KEY, e.target.value);
    setLang(e.target.value).catch(() => toast(t("toast.offline")));
  });
  const wanted = stored(LANG_KEY);
  await setLang(LANGS.includes(wanted) ? wanted : guessLang())
    .catch(() => setLang("en"))
    .catch(() => render()); // without any catalogue the page shows the keys, but still works
  // Start the stream a little in the past, so a phone that joins sees what just happened.
  const state = await refreshState().catch(() => null);
  ui.lastId = Math.max(0, (state?.last_event_id ?? 0) - HISTORY_EVENTS);
  for (const hook of hooks.start) hook();
  connect();
  loadProfiles().catch(() => {}); // without them the select still offers the built-in names
}

document.addEventListener("DOMContentLoaded", start);
