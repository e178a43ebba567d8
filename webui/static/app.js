// The phone page of the UNO launcher: one big button, the shuffle and its sealed seed, a live feed, the hopper's count,
// a new-shuffle control, the rules of each profile and a language switch. The game at the table (game.js, score.js,
// setup.js) and the other modules join in through `hooks` (core.js), which main.js fills before start().
// A native ES module with no build step. Every visible text comes from the catalogues in static/i18n/.
import { readState, request, refusal } from "./api.js";
import {
  $,
  hooks,
  ui,
  t,
  stored,
  remember,
  span,
  vibrate,
  toast,
  percent,
  decimal,
  profileName,
  profileAbout,
  PROFILE_NAMES,
} from "./core.js";
import { confirmed } from "./confirm.js";
import { setTension } from "./motion.js";
import { phonePlayer, phoneCall, renderPrompt } from "./game.js";
import { asked, BLOCKED_BY, faultReason, game, mayChangeTrouble, shownTrouble } from "./gamestate.js";

const LANGS = ["en", "zh-Hans", "zh-Hant"];
const LANG_KEY = "uno-launcher.lang";
const LANG_COOKIE = "uno-launcher.lang"; // webui/page.py LANG_COOKIE
const LANG_COOKIE_S = 365 * 24 * 3600;
const FEED_MAX = 60; // events kept for the whole history
const FEED_LINES = 6; // lines of the quiet feed
const HISTORY_EVENTS = 60; // replayed when the page opens: about two events per feed line
const JACKPOT_MS = 2400; // how long the stage celebrates a jackpot
const SUSPENSE_GRACE_MS = 15000; // a suspense the outcome never followed (lost stream) ends after pause + this
const HEARTBEAT_MS = 15000; // the daemon's default [web] heartbeat_s: a stream quiet for longer may be dead
const SHORT_HASH = 12; // hex characters of the commitment shown before "…"
const VIBRATE_FIRE = 120;
const VIBRATE_JACKPOT = [90, 60, 90, 60, 240];
const PRESS_FOR_MS = 6000; // "Press for Dee?" goes after this, or as soon as the table asks someone else

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

// The page comes with its own language's words in place and its catalogue inside (webui/page.py): only another
// language's catalogue is fetched.
async function catalogueOf(code) {
  const sent = $("strings");
  if (sent.dataset.lang === code) return JSON.parse(sent.textContent);
  const response = await fetch(document.body.dataset.i18nBase + code + ".json");
  if (!response.ok) throw new Error(`catalogue ${code}: HTTP ${response.status}`);
  return response.json();
}

// The language picked on this phone, told to the daemon too, so that the next page comes in it.
function pickLang(code) {
  remember(LANG_KEY, code);
  document.cookie = `${LANG_COOKIE}=${code}; path=/; max-age=${LANG_COOKIE_S}; samesite=strict`;
}

async function setLang(code) {
  ui.strings = await catalogueOf(code);
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

// A phone that has not joined may not press: its press would only be refused, so it is told to join first. On
// this phone's plain turn the button says that a tap is for a player who cannot play (it ends the turn).
export function renderButton() {
  const button = $("press");
  const outsider = ui.joined === false;
  const blocked = BLOCKED_BY[shownTrouble()?.code];
  button.disabled = ui.busy || outsider || Boolean(blocked);
  button.setAttribute("aria-busy", String(ui.busy));
  let caption;
  if (ui.busy) caption = t("button.busy");
  else if (outsider) caption = t("button.join_first");
  else if (blocked) caption = blocked();
  else if (ui.trouble) caption = t("button.after_jam");
  else if (phoneCall() === "turn") caption = t("button.cant_play");
  else caption = t("button.caption");
  $("press-caption").textContent = caption;
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
  const low = hopperLow();
  $("hopper-low").hidden = !low;
  $("hopper-low").textContent = low;
  renderButton();
  renderPrompt(); // an empty hopper is told as trouble at the top, with its refill
}

// Under the button, before a press fails: the hopper holds fewer cards than a press may take (what a classic deal
// owes, else the most the shuffle's profile fires). An empty one is trouble, told at the top (gamestate.js).
function hopperLow() {
  const remaining = ui.hopper?.remaining;
  if (!remaining || ["empty", "short"].includes(ui.trouble?.code)) return "";
  const deal = game.data?.scoreboard.over ? null : game.data?.table.pending?.cards;
  const needed = deal || (ui.profiles?.find((p) => p.name === ui.shuffle?.profile)?.max_cards ?? 1);
  if (remaining >= needed) return "";
  return remaining === 1 ? t("hopper.low_one", { needed }) : t("hopper.low", { remaining, needed });
}

// A lost board has no banner: the prompt tells it, and that it comes back by itself (no Reset to ask for).
export function renderFault() {
  const banner = ui.fault && ui.faultCause !== "board";
  $("fault").hidden = !banner;
  $("fault-text").textContent = banner ? t("fault.banner", { reason: faultReason(ui.faultCause) }) : "";
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
      if (data.cause === "board") return ["⚠", t("feed.board_lost")];
      return ["⚠", t("feed.fault", { reason: faultReason(data.cause) })];
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
  $("feed-lines").replaceChildren(...quietItems());
  $("feed-none").hidden = ui.feed.length > 0;
  $("feed-all").hidden = ui.feed.length === 0;
}

// ---- The quiet feed: one line per press, who pressed and what came out ----

// What a press's line takes in after its button.pressed: the suspense, the outcome, whom the game gave it to.
const PRESS_PARTS = new Set(["launcher.suspense", "launcher.missed", "launcher.fired", "launcher.dealt", "attack.progress"]);
// How a press can end in trouble: told in the press's own line (and in every phone's prompt), not a line more.
const PRESS_TROUBLES = new Set(["launcher.jammed", "launcher.empty", "launcher.stopped"]);

// The feed's events as lines, newest first: {key, press: [its events]} for a press, {key, event} for the others.
function quietLines(events) {
  const lines = [];
  let press = null; // the newest press's events: what follows it belongs to it
  for (const event of [...events].reverse()) {
    if (event.type === "button.pressed") {
      press = [event];
      lines.unshift({ key: `p${event.id}`, press });
      continue;
    }
    // A FAULT keeps its own line too: the admin must see to it.
    const part = press !== null && (PRESS_PARTS.has(event.type) || PRESS_TROUBLES.has(event.type));
    if (part || (press !== null && event.type === "hardware.fault")) press.push(event);
    if (!part) lines.unshift({ key: `e${event.id}`, event });
  }
  return lines;
}

function quietItems() {
  return quietLines(ui.feed)
    .slice(0, FEED_LINES)
    .map((line) => {
      const li = line.press ? pressItem(line.press) : feedItem(line.event);
      li.dataset.key = line.key;
      return li;
    });
}

// A new event adds a line or changes the newest press's: only those nodes change, so that screen readers announce
// just them.
function updateQuietFeed() {
  const list = $("feed-lines");
  const shown = new Map([...list.children].map((li) => [li.dataset.key, li]));
  const items = quietItems().map((li) => {
    const same = shown.get(li.dataset.key);
    return same?.textContent === li.textContent ? same : li;
  });
  const kept = new Set(items);
  for (const li of [...list.children]) if (!kept.has(li)) li.remove();
  items.forEach((li, i) => list.children[i] !== li && list.insertBefore(li, list.children[i] ?? null));
}

// What a press that ended in trouble brought: [symbol, words] (a jam, a stuck card, an empty hopper, a stop).
function troubleWhat(type, data) {
  if (type === "launcher.jammed") {
    return ["⚠", data.reason === "stuck_at_exit" ? t("line.stuck") : t("line.jammed")];
  }
  if (type === "launcher.stopped") return ["■", t("line.stopped")];
  return ["⚠", t("line.empty")];
}

// "Ben pressed — 3 cards": the player the game gave the press to, else where it was pressed; "…" until it ends.
// A press that jammed is the same one line: "Ben pressed — jammed: no card came out".
function pressItem(events) {
  const [pressed] = events;
  let player = null;
  let dispensed = null;
  let jackpot = false;
  let stopped = false; // a FAULT ended it: no outcome comes
  let owed = 0; // the hopper ran out: cards drawn that did not come out
  let trouble = null;
  let cut = 0; // a FAULT cut this press's fire short: the cards out by then (its own count)
  for (const { type, data } of events) {
    player = data.player ?? player;
    if (type === "hardware.fault") {
      stopped = true;
      if (data.press === pressed.data.press) cut = data.dispensed ?? 0;
      continue;
    }
    if (type === "launcher.missed") dispensed = 0;
    else if (data.dispensed !== undefined) dispensed = data.dispensed;
    jackpot ||= Boolean(data.jackpot);
    owed = data.owed ?? owed;
    if (PRESS_TROUBLES.has(type) && !data.dispensed) trouble = troubleWhat(type, data);
  }
  const who = player ?? (pressed.data.source === "button" ? t("line.button") : t("line.phone"));
  const values = { n: dispensed };
  let [symbol, what] =
    dispensed === null
      ? stopped
        ? ["⚠", t("line.stopped")]
        : ["…", t("line.waiting")]
      : trouble
        ? trouble
        : jackpot
          ? ["★", t("line.jackpot", values)]
          : dispensed === 0
            ? ["○", t("line.nothing")]
            : [`🃏\uFE0F×${dispensed}`, dispensed === 1 ? t("line.card_one") : t("line.cards", values)];
  if (owed > 0) [symbol, what] = ["⚠", t("line.short", { what, owed })];
  if (dispensed === null && cut) {
    const out = cut === 1 ? t("line.card_one") : t("line.cards", { n: cut });
    [symbol, what] = ["⚠", t("line.stopped_after", { what: out })];
  }
  const li = document.createElement("li");
  li.dataset.type = "press";
  if (pressed.data.press) li.dataset.press = pressed.data.press;
  if (player) li.dataset.player = player;
  if (jackpot) li.dataset.jackpot = "true";
  li.append(span("feed-symbol", symbol), span("feed-text", t("line.pressed", { who, what })), clockTime(pressed.ts));
  return li;
}

const CLOCK = { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" };

function clockTime(ts) {
  const when = document.createElement("time");
  const date = new Date(ts * 1000);
  when.dateTime = date.toISOString();
  when.textContent = date.toLocaleTimeString(ui.lang, CLOCK);
  return when;
}

function feedItem(event) {
  const [symbol, text] = describe(event);
  const li = document.createElement("li");
  li.dataset.type = event.type;
  if (event.data.press !== undefined && event.data.press !== null) li.dataset.press = event.data.press;
  if (event.data.round !== undefined) li.dataset.round = event.data.round; // the game's
  if (event.data.shuffle !== undefined) li.dataset.shuffle = event.data.shuffle;
  if (event.data.jackpot) li.dataset.jackpot = "true";
  li.append(span("feed-symbol", symbol), span("feed-text", text), clockTime(event.ts));
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

// ---- Talking to the daemon ----

// A press for the player this phone belongs to (game.js: phonePlayer), else for whoever the table asks, as the
// launcher's own button does. When the table asks someone else, the phone asks first: "Press for Dee?".
async function press(forPlayer = phonePlayer()) {
  if (ui.busy) return;
  // Further down a queue (a Wild All Hit: one press each, in the order of play), this phone's player waits for
  // whoever is due: the tap asks "Press for Mum?" rather than pressing ahead of her.
  const due = asked();
  if (forPlayer && due && forPlayer !== due && queued(forPlayer)) {
    askPressFor(due);
    return;
  }
  ui.busy = true;
  askPressFor(null);
  renderButton();
  try {
    const body = await request("POST", "/api/press", forPlayer ? { player: forPlayer } : {});
    setTension(body.tension);
    if (body.dispensed > 0) vibrate(body.jackpot ? VIBRATE_JACKPOT : VIBRATE_FIRE); // this phone's own fire
  } catch (error) {
    const code = error.status === 409 ? error.code : undefined;
    if (code === "busy") toast(t("toast.busy"));
    else if (code === "lid_open") toast(t("feed.ignored_lid"));
    else if (code === "not_your_press" && error.asked) askPressFor(error.asked);
    else toast(refusal(error));
  } finally {
    ui.busy = false;
    renderButton();
  }
}

function queued(player) {
  return Boolean(game.data?.table.demands.some((demand) => demand.player === player));
}

// "Press for Dee?" under the button, or hidden (null). Yes presses for Dee; the question goes with any other press,
// after PRESS_FOR_MS, and when the table no longer asks Dee (a stale question would credit the wrong player).
let pressForTimer;
function askPressFor(player) {
  clearTimeout(pressForTimer);
  $("press-for").hidden = !player;
  $("press-for").dataset.player = player ?? "";
  if (!player) return;
  pressForTimer = setTimeout(() => askPressFor(null), PRESS_FOR_MS);
  $("press-for-text").textContent = t("press_for.ask", { player });
  $("press-for-yes").textContent = t("press_for.yes", { player });
  $("press-for-yes").focus();
}

// Someone refilled the hopper: it is full again, at the size it was loaded with.
async function reload() {
  if (!(await confirmed(t("confirm.reload")))) return; // the count of cards left starts again
  try {
    await request("POST", "/api/hopper", { cards: ui.hopper?.loaded ?? 112 });
  } catch (error) {
    toast(refusal(error));
  }
}

// End the shuffle being played (its seed is revealed) and start a new one with the chosen profile.
async function newShuffle() {
  if (ui.starting || !(await confirmed(t("confirm.new_shuffle")))) return;
  ui.starting = true;
  renderProfileChoice();
  try {
    const { shuffle } = await request("POST", "/api/shuffles", { profile: $("profile").value });
    ui.picked = false;
    showShuffle(shuffle);
    toast(t("toast.shuffle_started", { shuffle: shuffle.number, profile: profileName(shuffle.profile) }));
  } catch (error) {
    toast(refusal(error));
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

// An element's whole text to the clipboard, and `copied` said; where the page may not use the clipboard (plain
// http on the home network is not a secure context), the text is selected for the phone's own Copy.
export async function copyText(element, copied) {
  try {
    await navigator.clipboard.writeText(element.textContent);
    toast(copied);
  } catch {
    getSelection().selectAllChildren(element);
    toast(t("toast.selected"));
  }
}

// Called on every (re)connection of the stream, so a restarted daemon's state replaces what we showed.
async function refreshState() {
  const state = await readState();
  if (!state) return null; // the events that came meanwhile are newer, and shown
  ui.snapshotId = state.last_event_id ?? ui.snapshotId;
  ui.hopper = state.hopper;
  ui.fault = state.fault;
  ui.faultCause = state.fault_cause;
  showTrouble(state.trouble);
  setTension(state.tension);
  if (state.shuffle) showShuffle(state.shuffle, true);
  renderHopper();
  renderFault();
  for (const hook of hooks.state) hook(state);
  return state;
}

// What stops the table now (docs/API.md: `trouble`), told in every phone's prompt and on its button.
function showTrouble(trouble) {
  ui.trouble = trouble ?? null;
  renderHopper(); // and the button and the prompt
}

let troubleReads = 0; // only the newest read is shown

// Read after the event came, the state holds it (readState's guard against older states would drop it when other
// events follow, as they do after a jam); of several reads, the newest one asked for wins.
async function refreshTrouble() {
  const read = ++troubleReads;
  const state = await request("GET", "/api/state");
  if (read === troubleReads) showTrouble(state.trouble);
}

// The fair mark in the header opens the fairness details (the shuffle, its fingerprint, the phones' randomness).
function openFairness() {
  const details = $("fairness");
  details.open = true;
  details.scrollIntoView({ block: "start" });
}

// The profiles and their long-run figures, for the select and the rules page.
async function loadProfiles() {
  const body = await request("GET", "/api/profiles");
  ui.profiles = body.profiles;
  renderProfileChoice();
  renderHopper(); // the most a fire of the profile takes
  renderRules();
}

function onEvent(event) {
  ui.lastId = event.id;
  ui.received += 1;
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
      ui.faultCause = data.cause;
      renderFault();
      break;
    case "hardware.ok":
      ui.fault = null;
      renderFault();
      break;
  }
  for (const hook of hooks.event) hook(event, fresh);
  if (fresh && mayChangeTrouble(event)) refreshTrouble().catch(() => {});
  if (describe(event)) {
    ui.feed.unshift(event);
    ui.feed.length = Math.min(ui.feed.length, FEED_MAX);
    const list = $("feed");
    list.prepend(feedItem(event));
    while (list.children.length > FEED_MAX) list.lastElementChild.remove();
    updateQuietFeed();
    $("feed-none").hidden = true;
    $("feed-all").hidden = false;
  }
}

let stream = null; // the event stream this page follows now
let hiddenSince = null; // performance.now() when the page was hidden

// The browser itself sends Last-Event-ID when it reconnects; the query only matters for a new stream.
// `joined`: opened again only because this phone joined (nothing was lost: no catch-up to keep quiet).
function connect(joined = false) {
  stream?.close();
  const source = new EventSource(`/api/events?last_event_id=${ui.lastId}`);
  stream = source;
  source.onopen = () => {
    ui.conn = "live";
    renderConn();
    refreshState().catch(() => {}); // the stream's own error handler reports a lost connection
    for (const hook of hooks.connected) hook({ joined });
  };
  source.onerror = () => {
    ui.conn = "reconnecting";
    renderConn();
    // The browser retries after network errors by itself (sending Last-Event-ID), but gives up for good
    // after an HTTP error status, e.g. from a proxy while the daemon restarts: then start a new stream.
    if (source.readyState === EventSource.CLOSED) setTimeout(() => source === stream && connect(), 5000);
  };
  source.onmessage = (message) => onEvent(JSON.parse(message.data));
}

// A phone that has just joined follows as a joined phone from now on: the daemon admits a stream by what the phone
// was when it opened it, and has few places for phones that have not joined (a whole family may share one address).
export function reopenStream() {
  if (stream) connect(true);
}

// iOS ends a hidden page's stream without a word, and may leave it looking open. Shown again, the page opens a
// new stream from the last event it received (the daemon replays what it missed) when the old one is not open,
// or was hidden longer than the daemon's heartbeat (a dead stream cannot be told from a quiet one sooner).
function resumeStream() {
  if (document.visibilityState === "hidden") {
    hiddenSince = performance.now();
    return;
  }
  const away = hiddenSince === null ? 0 : performance.now() - hiddenSince;
  hiddenSince = null;
  if (stream && (stream.readyState !== EventSource.OPEN || away > HEARTBEAT_MS)) connect();
}

// ---- Start ----

// The game shown changed: the button's words may (this phone's turn), and a question for a player the table no
// longer asks goes.
function onSeated() {
  const question = $("press-for").dataset.player;
  if (question && question !== asked()) askPressFor(null);
  renderHopper(); // what a classic deal owes, and the button
}

export async function start() {
  hooks.seated.push(onSeated);
  $("press").addEventListener("click", () => press());
  $("press-for-yes").addEventListener("click", () => press($("press-for").dataset.player));
  $("press-for-no").addEventListener("click", () => askPressFor(null));
  $("reload").addEventListener("click", reload);
  $("trouble-refill").addEventListener("click", reload);
  $("new-shuffle").addEventListener("click", newShuffle);
  $("seal-copy").addEventListener("click", () => copyText($("seal-full"), t("toast.copied")));
  $("fair-chip").addEventListener("click", openFairness);
  $("fairness").addEventListener("toggle", () => {
    $("fair-chip").setAttribute("aria-expanded", String($("fairness").open));
  });
  $("profile").addEventListener("change", () => {
    ui.picked = true;
    $("profile-about").textContent = profileAbout($("profile").value);
  });
  $("lang").addEventListener("change", (e) => {
    pickLang(e.target.value);
    setLang(e.target.value).catch(() => toast(t("toast.offline")));
  });
  const wanted = stored(LANG_KEY);
  if (LANGS.includes(wanted)) pickLang(wanted); // a phone that picked before the daemon kept the choice
  await setLang(LANGS.includes(wanted) ? wanted : guessLang())
    .catch(() => setLang("en"))
    .catch(() => render()); // without any catalogue the page shows the keys, but still works
  // Start the stream a little in the past, so a phone that joins sees what just happened.
  const state = await refreshState().catch(() => null);
  ui.lastId = Math.max(0, (state?.last_event_id ?? 0) - HISTORY_EVENTS);
  // A phone opened by the QR link joins before it follows (access.js): its one stream is then a joined phone's,
  // and it never holds one of the few places the daemon keeps for phones that have not joined.
  await Promise.allSettled(hooks.start.map((hook) => hook()));
  connect();
  document.addEventListener("visibilitychange", resumeStream);
  loadProfiles().catch(() => {}); // without them the select still offers the built-in names
}

