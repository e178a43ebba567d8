// The phone page of the UNO launcher: one big button, a live feed, the deck level and a language switch.
// Vanilla JS with no build step. Every visible text comes from the catalogues in static/i18n/.
"use strict";

const LANGS = ["en", "zh-Hans", "zh-Hant"];
const LANG_KEY = "uno-launcher.lang";
const FEED_MAX = 30;
const HISTORY_EVENTS = 60; // replayed when the page opens: about two events per feed line
const TOAST_MS = 3000;

const $ = (id) => document.getElementById(id);

const ui = {
  lang: "en",
  strings: {},
  conn: "connecting", // connecting | live | reconnecting
  busy: false, // a press from this phone is in flight
  deck: null, // {loaded, dispensed, remaining} once known
  fault: null, // message of the latched hardware fault, if any
  feed: [], // events shown in the feed, newest first
  lastId: 0, // id of the newest event received
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

// localStorage can be switched off (private modes, strict settings): then the choice is just not remembered.
function storedLang() {
  try {
    return localStorage.getItem(LANG_KEY);
  } catch {
    return null;
  }
}

function rememberLang(code) {
  try {
    localStorage.setItem(LANG_KEY, code);
  } catch {
    // Nothing to do: the page still works in the chosen language until it is reloaded.
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

// ---- Rendering ----

function render() {
  renderConn();
  renderButton();
  renderDeck();
  renderFault();
  renderFeed();
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

function renderDeck() {
  const deck = ui.deck;
  $("deck-text").textContent = deck ? t("deck.level", deck) : t("deck.unknown");
  const bar = $("deck-bar");
  bar.max = Math.max(1, deck?.loaded ?? 1);
  bar.value = deck?.remaining ?? 0;
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
      return ["✋", data.source === "button" ? t("feed.pressed_button", data) : t("feed.pressed_web", data)];
    case "launcher.missed":
      return ["○", t("feed.missed", data)];
    case "launcher.fired":
      return [`🃏\uFE0F×${data.dispensed}`, data.dispensed === 1 ? t("feed.fired_one", data) : t("feed.fired", data)];
    case "launcher.jammed":
      return ["⚠", t("feed.jammed", data)];
    case "launcher.empty":
      return ["⚠", t("feed.empty", data)];
    case "button.ignored":
      return data.reason === "fault" ? ["⚠", t("feed.ignored_fault")] : ["⏳", t("feed.ignored_busy")];
    case "hardware.fault":
      return ["⚠", t("feed.fault", data)];
    case "hardware.ok":
      return ["✓", t("feed.ok")];
    case "deck.reloaded":
      return ["↻", t("feed.reloaded", data)];
    default:
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
  if (event.data.press !== undefined) li.dataset.press = event.data.press;
  const when = document.createElement("time");
  const date = new Date(event.ts * 1000);
  when.dateTime = date.toISOString();
  when.textContent = date.toLocaleTimeString(ui.lang, CLOCK);
  li.append(span("feed-symbol", symbol), span("feed-text", text), when);
  return li;
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

let toastTimer;
function toast(text) {
  const box = $("toast");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), TOAST_MS);
}

// ---- Talking to the daemon ----

async function press() {
  if (ui.busy) return;
  ui.busy = true;
  renderButton();
  try {
    const response = await fetch("/api/press", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    const body = await response.json().catch(() => ({}));
    if (response.ok) setTension(body.tension);
    else if (response.status === 409 && body.error?.code === "busy") toast(t("toast.busy"));
    else toast(body.error?.message || t("toast.failed", { status: response.status }));
  } catch {
    toast(t("toast.offline"));
  } finally {
    ui.busy = false;
    renderButton();
  }
}

// Someone refilled the hopper: the deck is full again, at the size it was loaded with.
async function reload() {
  try {
    const response = await fetch("/api/deck", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ cards: ui.deck?.loaded ?? 112 }),
    });
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      toast(body.error?.message || t("toast.failed", { status: response.status }));
    }
  } catch {
    toast(t("toast.offline"));
  }
}

// Called on every (re)connection of the stream, so a restarted daemon's state replaces what we showed.
async function refreshState() {
  const response = await fetch("/api/state");
  if (!response.ok) throw new Error(`state: HTTP ${response.status}`);
  const state = await response.json();
  ui.deck = state.deck;
  ui.fault = state.fault;
  setTension(state.tension);
  renderDeck();
  renderFault();
  return state;
}

function onEvent(event) {
  ui.lastId = event.id;
  const data = event.data;
  switch (event.type) {
    case "launcher.missed":
      setTension(data.tension);
      break;
    case "launcher.fired":
      setTension(0);
      break;
    case "deck.changed":
    case "deck.reloaded":
      ui.deck = data;
      renderDeck();
      break;
    case "hardware.fault":
      ui.fault = data.message;
      renderFault();
      break;
    case "hardware.ok":
      ui.fault = null;
      renderFault();
      break;
  }
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
  $("press").addEventListener("click", press);
  $("reload").addEventListener("click", reload);
  $("lang").addEventListener("change", (e) => {
    rememberLang(e.target.value);
    setLang(e.target.value).catch(() => toast(t("toast.offline")));
  });
  const wanted = storedLang();
  await setLang(LANGS.includes(wanted) ? wanted : guessLang())
    .catch(() => setLang("en"))
    .catch(() => render()); // without any catalogue the page shows the keys, but still works
  // Start the stream a little in the past, so a phone that joins sees what just happened.
  const state = await refreshState().catch(() => null);
  ui.lastId = Math.max(0, (state?.last_event_id ?? 0) - HISTORY_EVENTS);
  connect();
}

start();
