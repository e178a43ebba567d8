// Fairness checked on the phone itself (docs/FAIRNESS.md). Before a shuffle's first press this phone adds 16 random
// bytes of its own to the shuffle's key; when the shuffle ends it fetches the record and replays it with its own
// SHA-256, HMAC and schedule, and says in the reader's language whether the shuffle was fair, or what did not match.
// It keeps what it was shown and what it added in localStorage, and goes on showing the commitment after the reveal.
// Plain browser JavaScript: crypto.subtle exists only on secure pages (https, localhost), and the phones open the
// launcher over plain http on the home network, so the hashing is done here; crypto.getRandomValues works anywhere.
// What it exports besides `plug` is its verifier, which tests/test_browser_fairness.py imports to check.
import { access } from "./access.js";
import { readState, request, refusal } from "./api.js";
import { $, ui, t, stored, remember, span } from "./core.js";

const FAIR_STORE = "uno-launcher.fair"; // {commitment: what this phone saw and added in that shuffle}, newest last
const FAIR_KEEP = 20; // shuffles remembered
// Today's; the one before runs were carried (no `carried`: every shuffle started afresh); the same before the rename.
const FAIR_FORMATS = ["uno-launcher-shuffle/4", "uno-launcher-shuffle/3", "uno-launcher-round/2"];
// The first bytes of a shuffle's key material: the format's name when the key was made, kept through the rename.
const FAIR_LABEL = "uno-launcher-round/2";
const FAIR_MAX = 32; // contributions a shuffle takes at most
const FAIR_CONTRIBUTE = "/api/shuffles/current/contributions";
const FAIR_HEX = /^[0-9a-f]{32}$/;
const FAIR_SHORT = 12; // hex characters of a commitment shown before "…"

const fair = {
  shuffle: null, // the shuffle in play: {number, commitment, profile, presses, contributions, open}
  watched: new Map(), // shuffle number -> the commitment this page was first shown for it
  swapped: null, // {shuffle, before}: the commitment of the shuffle in play changed while this page watched
  sending: false, // a contribution is on its way
  refused: null, // {commitment, error}: this phone's contribution refused for a reason its memory does not keep
  checked: null, // the last ended shuffle: {shuffle, commitment, result} (result null while it is checked)
  newestEnded: 0, // the highest shuffle.ended number seen, so older ones in the history are not checked
  seenId: 0, // the newest event the last state read holds: the stream's older events are in it already
};

// ---- SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), on Uint8Arrays ----

const FAIR_K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const FAIR_H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

function fairRotr(x, n) {
  return (x >>> n) | (x << (32 - n));
}

export function fairSha256(data) {
  const length = data.length;
  const padded = new Uint8Array((((length + 8) >> 6) + 1) << 6); // the message, 0x80, zeros, its bit length
  padded.set(data);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
  view.setUint32(padded.length - 4, (length * 8) >>> 0);
  const h = new Uint32Array(FAIR_H0);
  const w = new Uint32Array(64);
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = fairRotr(w[i - 15], 7) ^ fairRotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = fairRotr(w[i - 2], 17) ^ fairRotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1; // a Uint32Array keeps the sum modulo 2^32
    }
    let [a, b, c, d, e, f, g, k] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = k + (fairRotr(e, 6) ^ fairRotr(e, 11) ^ fairRotr(e, 25)) + ((e & f) ^ (~e & g)) + FAIR_K[i] + w[i];
      const t2 = (fairRotr(a, 2) ^ fairRotr(a, 13) ^ fairRotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    [a, b, c, d, e, f, g, k].forEach((value, i) => (h[i] += value));
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  h.forEach((value, i) => outView.setUint32(4 * i, value));
  return out;
}

export function fairHmac(key, message) {
  const block = key.length > 64 ? fairSha256(key) : key;
  const inner = new Uint8Array(64 + message.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    inner[i] = (block[i] ?? 0) ^ 0x36;
    outer[i] = (block[i] ?? 0) ^ 0x5c;
  }
  inner.set(message, 64);
  outer.set(fairSha256(inner), 64);
  return fairSha256(outer);
}

function fairBytes(...parts) {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function fairBe32(n) {
  return Uint8Array.of(n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);
}

export function fairHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function fairUtf8(text) {
  return new TextEncoder().encode(text);
}

// ---- The derivation of docs/FAIRNESS.md ----

// The shuffle's key: SHA-256 of the label, a zero byte, the framed seed, the count, the framed contributions in order.
export function fairShuffleKey(seed, contributions) {
  const frame = (text) => {
    const bytes = fairUtf8(text);
    return fairBytes(fairBe32(bytes.length), bytes);
  };
  const head = [fairUtf8(FAIR_LABEL), Uint8Array.of(0), frame(seed), fairBe32(contributions.length)];
  return fairSha256(fairBytes(...head, ...contributions.map(frame)));
}

// Draw k: the top 53 bits of the (k mod 4)-th 64-bit word of HMAC-SHA256(key, k div 4 as 8 bytes big-endian).
export function fairDraws(key) {
  let k = 0;
  let block = null;
  return () => {
    const word = k % 4;
    if (word === 0) {
      const j = k / 4;
      const counter = fairBytes(fairBe32(Math.floor(j / 0x100000000)), fairBe32(j >>> 0));
      block = new DataView(fairHmac(key, counter).buffer);
    }
    k++;
    const high = block.getUint32(8 * word);
    const low = block.getUint32(8 * word + 4);
    return (high * 0x200000 + (low >>> 11)) / 0x20000000000000; // (w >> 11) / 2^53, exact
  };
}

// The outcomes of a shuffle's first n presses, each press drawing as docs/FAIRNESS.md lists (a port of the schedule).
// `carried`: the run of misses or fires the shuffle went on from (a pattern starts over instead).
export function fairReplay(profile, key, n, restarts = [], carried = { misses_in_row: 0, fires_in_row: 0 }) {
  const draw = fairDraws(key);
  const p = profile;
  const sums = [];
  let total = 0;
  for (const weight of p.card_weights) sums.push((total += weight));
  let last = 0;
  p.card_weights.forEach((weight, i) => weight > 0 && (last = i));
  const cycle = p.pattern.length ? p.pattern[p.pattern.length - 1] : 0;
  const lid = new Set(restarts);
  let misses = cycle ? 0 : carried.misses_in_row;
  let fires = cycle ? 0 : carried.fires_in_row;
  let place = 0;
  const outcomes = [];
  for (let done = 0; done < n; done++) {
    if (lid.has(done) && cycle) misses = fires = place = 0;
    let pause = 0;
    if (p.pause_probability > 0 && draw() < p.pause_probability) {
      pause = p.pause_ms[0] + Math.floor(draw() * (p.pause_ms[1] - p.pause_ms[0] + 1));
    }
    let threshold;
    if (cycle) {
      place = (place % cycle) + 1;
      threshold = p.pattern.includes(place) ? 1 : 0;
    } else {
      threshold = fires < p.max_fires_in_row ? p.hazard[misses] : 0;
    }
    let cards = 0;
    let jackpot = false;
    if (draw() < threshold) {
      misses = 0;
      fires += 1;
      if (p.jackpot_probability > 0 && draw() < p.jackpot_probability) {
        jackpot = true;
        cards = p.jackpot_cards[0] + Math.floor(draw() * (p.jackpot_cards[1] - p.jackpot_cards[0] + 1));
      } else {
        const x = draw() * total;
        let i = 0;
        while (i < last && !(x < sums[i])) i++;
        cards = i + 1;
      }
    } else {
      misses += 1;
      fires = 0;
    }
    outcomes.push({ press: done + 1, cards, jackpot, pause_ms: pause });
  }
  return outcomes;
}

// ---- Reading and checking a record ----

class FairUnreadable extends Error {}

const fairWhole = (value) => Number.isInteger(value) && value >= 0;
const fairNumbers = (value) => Array.isArray(value) && value.every((v) => typeof v === "number" && isFinite(v));

function fairRefuse(field, value, expected) {
  throw new FairUnreadable(`${field} = ${JSON.stringify(value)?.slice(0, 60)}: ${expected}`);
}

function fairField(record, key, check, expected) {
  if (!(key in record)) throw new FairUnreadable(`${key}: missing`);
  if (!check(record[key])) fairRefuse(key, record[key], expected);
  return record[key];
}

// The profile's parameters, as far as the replay needs them to hold.
function fairProfile(p) {
  const range = (v) => Array.isArray(v) && v.length === 2 && fairWhole(v[0]) && v[0] <= v[1];
  const probability = (v) => typeof v === "number" && v >= 0 && v <= 1;
  fairField(p, "name", (v) => typeof v === "string", "a name");
  const rising = (v) => Array.isArray(v) && v.every((n, i) => Number.isInteger(n) && n > (v[i - 1] ?? 0));
  fairField(p, "pattern", rising, "rising press numbers");
  if (!p.pattern.length) {
    const hazard = (v) => fairNumbers(v) && v.length >= 2 && v.at(-1) === 1 && v.every((x, i) => x >= (v[i - 1] ?? 0));
    fairField(p, "hazard", hazard, "rising fire probabilities ending with 1");
  }
  fairField(p, "max_fires_in_row", (v) => Number.isInteger(v) && v >= 1, "a whole number from 1");
  const weights = (v) => fairNumbers(v) && v.length >= 1 && v.every((x) => x >= 0) && v.some((x) => x > 0);
  fairField(p, "card_weights", weights, "weights, not all zero");
  fairField(p, "jackpot_probability", probability, "a probability");
  fairField(p, "jackpot_cards", range, "[lowest, highest]");
  fairField(p, "pause_probability", probability, "a probability");
  fairField(p, "pause_ms", range, "[shortest, longest]");
  return p;
}

// The run of misses or fires the shuffle went on from: one the profile can have (none for a pattern: it starts over).
function fairCarried(profile, record) {
  const drought = profile.pattern.length ? 0 : profile.hazard.length - 1;
  const cap = profile.pattern.length ? 0 : profile.max_fires_in_row;
  const run = (v) =>
    typeof v === "object" &&
    v !== null &&
    Object.keys(v).length === 2 &&
    fairWhole(v.misses_in_row) &&
    fairWhole(v.fires_in_row) &&
    !(v.misses_in_row && v.fires_in_row) &&
    v.misses_in_row <= drought &&
    v.fires_in_row <= cap;
  return fairField(record, "carried", run, "a run the profile can have: {misses_in_row, fires_in_row}");
}

// Check a record against its own commitment and a replay, and against what this phone saw (`seen`, all optional):
// {commitment: shown before the first press, mine: this phone's contribution, index: its place when taken,
//  contributions: those this phone saw published, in order, profile: the name the shuffle was announced with}.
export function fairVerify(record, seen = {}) {
  const result = { error: null, format: record?.format, presses: 0, contributions: 0, mismatch: null, shortfalls: [] };
  try {
    if (typeof record !== "object" || record === null || Array.isArray(record)) {
      throw new FairUnreadable("not a JSON object");
    }
    if (record.format === undefined || record.format === "uno-launcher-round/1") return { ...result, older: true };
    if (!FAIR_FORMATS.includes(record.format)) fairRefuse("format", record.format, FAIR_FORMATS.join(" or "));
    const profile = fairProfile(fairField(record, "profile", (v) => typeof v === "object" && v !== null, "an object"));
    const seed = fairField(record, "seed", (v) => typeof v === "string", "a string");
    const commitment = fairField(record, "commitment", (v) => typeof v === "string", "a string").toLowerCase();
    const hex = (v) => Array.isArray(v) && v.length <= FAIR_MAX && v.every((c) => FAIR_HEX.test(c));
    const contributions = fairField(record, "contributions", hex, "up to 32 values of 32 lowercase hex characters");
    const restarts = record.restarts ?? [];
    if (!Array.isArray(restarts) || !restarts.every(fairWhole)) fairRefuse("restarts", restarts, "press counts");
    const carried = record.format === FAIR_FORMATS[0] ? fairCarried(profile, record) : undefined;
    const outcomes = fairField(record, "outcomes", Array.isArray, "an array");
    outcomes.forEach((o, i) => {
      const fields = ["press", "cards", "jackpot", "pause_ms", "dispensed", "stop"];
      if (typeof o !== "object" || o === null || !fields.every((f) => f in o)) {
        fairRefuse(`outcomes[${i}]`, o, `an object with ${fields.join(", ")}`);
      }
    });
    result.presses = outcomes.length;
    result.contributions = contributions.length;
    result.commitmentOk = fairHex(fairSha256(fairUtf8(seed))) === commitment;
    result.seenCommitment = seen.commitment ? seen.commitment.toLowerCase() === commitment : null;
    if (seen.mine) {
      const place = contributions.indexOf(seen.mine);
      const ok = place >= 0 && (seen.index == null || contributions[seen.index] === seen.mine);
      result.mine = { ok, place: place + 1 };
    }
    if (seen.contributions?.length) {
      result.seenContributions = seen.contributions.every((value, i) => contributions[i] === value);
    }
    if (seen.profile) {
      result.profile = { ok: seen.profile === profile.name, recorded: profile.name, shown: seen.profile };
    }
    const replayed = fairReplay(profile, fairShuffleKey(seed, contributions), outcomes.length, restarts, carried);
    for (let i = 0; i < outcomes.length && !result.mismatch; i++) {
      const recorded = outcomes[i];
      const expected = replayed[i];
      for (const field of ["press", "cards", "jackpot", "pause_ms"]) {
        if (recorded[field] !== expected[field]) {
          result.mismatch = { press: i + 1, field, recorded: recorded[field], replayed: expected[field] };
          break;
        }
      }
    }
    result.shortfalls = outcomes
      .filter((o) => o.dispensed !== o.cards || o.stop === null)
      .map((o) => ({ press: o.press, cards: o.cards, dispensed: o.dispensed, stop: o.stop }));
    result.ok =
      result.commitmentOk &&
      !result.mismatch &&
      result.seenCommitment !== false &&
      result.mine?.ok !== false &&
      result.seenContributions !== false &&
      result.profile?.ok !== false;
  } catch (error) {
    if (!(error instanceof FairUnreadable)) throw error;
    return { ...result, error: error.message };
  }
  return result;
}

// ---- What this phone saw and added, kept across visits ----

function fairMemory() {
  try {
    const memory = JSON.parse(stored(FAIR_STORE) ?? "{}");
    return memory && typeof memory === "object" ? memory : {};
  } catch {
    return {};
  }
}

function fairNote(commitment, changes) {
  const memory = fairMemory();
  const entry = { ...(memory[commitment] ?? {}), ...changes };
  delete memory[commitment];
  memory[commitment] = entry;
  const keys = Object.keys(memory);
  for (const key of keys.slice(0, Math.max(0, keys.length - FAIR_KEEP))) delete memory[key];
  remember(FAIR_STORE, JSON.stringify(memory));
  return entry;
}

function fairJoined() {
  return access.role === "table" || access.role === "admin";
}

// A shuffle as the state or an event shows it: remembered with the commitment, and this phone's bytes added.
export function fairFollow(shuffle) {
  if (!shuffle?.commitment) return;
  const watched = fair.watched.get(shuffle.number);
  if (watched && watched !== shuffle.commitment) fair.swapped = { shuffle: shuffle.number, before: watched };
  if (!watched) fair.watched.set(shuffle.number, shuffle.commitment);
  let contributions = Array.isArray(shuffle.contributions) ? shuffle.contributions : [];
  let presses = shuffle.presses ?? 0;
  let open = shuffle.contributions_open ?? presses === 0;
  const known = fair.shuffle;
  if (known?.number === shuffle.number && known.commitment === shuffle.commitment) {
    // The same shuffle again (a state read can be older than events already shown): what is known only grows.
    if (known.contributions.length > contributions.length) contributions = known.contributions;
    presses = Math.max(presses, known.presses);
    open = open && known.open;
  }
  const { number, commitment, profile } = shuffle;
  fair.shuffle = { number, commitment, profile, presses, contributions, open };
  const before = fairMemory()[shuffle.commitment]?.before || fair.shuffle.presses === 0;
  fairNote(shuffle.commitment, { shuffle: shuffle.number, profile: shuffle.profile, before, seen: contributions });
  fairRender();
  fairContribute();
}

async function fairRefresh() {
  let state;
  try {
    state = await readState();
  } catch (error) {
    if (error.status === 0) throw error;
    return;
  }
  if (!state) return; // older than events already followed
  fair.seenId = Math.max(fair.seenId, state.last_event_id ?? 0);
  fairFollow(state.shuffle);
}

// This phone's 16 random bytes for the shuffle in play, once, while the shuffle takes them.
async function fairContribute() {
  const shuffle = fair.shuffle;
  if (!shuffle || fair.sending || !fairJoined()) return;
  const entry = fairMemory()[shuffle.commitment] ?? {};
  const taken = entry.index != null || (entry.mine && shuffle.contributions.includes(entry.mine));
  if (entry.late || entry.full || entry.other || taken) return;
  if (!shuffle.open || shuffle.presses > 0) {
    fairNote(shuffle.commitment, { late: true }); // joined, and the first press came before this phone's bytes
    fairRender();
    return;
  }
  const value = entry.mine ?? fairHex(crypto.getRandomValues(new Uint8Array(16)));
  fairNote(shuffle.commitment, { mine: value }); // kept first: a try that is lost sends the same bytes again
  fair.sending = true;
  fair.refused = null;
  fairRender();
  try {
    // The phone is not asked to join: it tries again once it does.
    const body = await request("POST", FAIR_CONTRIBUTE, { shuffle: shuffle.number, value }, { refused: false });
    fairNote(shuffle.commitment, { index: body.index });
    if (shuffle.contributions.length === body.index) shuffle.contributions = [...shuffle.contributions, value];
  } catch (error) {
    // Offline (status 0): tried again when the stream reconnects. join_required: tried again once this phone
    // joins; shuffle_over, shuffle_not_started: a newer shuffle is coming. Each is told while this shuffle shows.
    const refused = error.status
      ? {
          contributions_closed: { late: true },
          contributions_full: { full: true },
          already_contributed: { other: true },
        }[error.code]
      : undefined;
    if (refused?.other && entry.index != null) {
      // This phone's own bytes, taken already (the answer came before the list showed them): nothing to change.
    } else if (refused) {
      fairNote(shuffle.commitment, refused);
    } else if (error.status) {
      fair.refused = { commitment: shuffle.commitment, error };
    }
    if (refused?.late) shuffle.open = false;
  } finally {
    fair.sending = false;
    fairRender();
  }
  // A newer shuffle was heard of while these bytes were on their way: it was not tried then. (The same shuffle,
  // read again meanwhile, is not newer: its list may not show these bytes yet, and they are not sent twice.)
  if (fair.shuffle && fair.shuffle.commitment !== shuffle.commitment) fairContribute();
}

// The record of an ended shuffle, checked against what this phone saw of it.
async function fairCheck(number, announced) {
  fair.checked = { shuffle: number, commitment: fair.watched.get(number) ?? announced, result: null };
  fairRender();
  let result;
  try {
    const record = await request("GET", `/api/shuffles/${encodeURIComponent(number)}`);
    const key = fair.watched.get(number) ?? record.commitment;
    const entry = fairMemory()[key] ?? {};
    const mine = entry.mine && !entry.late && !entry.full && !entry.other ? entry.mine : null;
    result = fairVerify(record, {
      commitment: entry.before ? key : null,
      mine,
      index: entry.index,
      contributions: entry.seen,
      profile: entry.profile,
    });
    result.late = Boolean(entry.late);
    result.seed = record.seed;
    fair.checked.commitment = entry.before ? key : record.commitment;
  } catch (error) {
    result = { error: error.status ? `HTTP ${error.status}` : String(error.message || error) };
  }
  if (fair.checked?.shuffle !== number) return; // a newer shuffle ended meanwhile
  fair.checked.result = result;
  fairRender();
  if (result.error || !result.ok) $("fair-check").open = true;
}

// ---- Showing it ----

function fairLine(state, text) {
  const li = document.createElement("li");
  li.dataset.state = state; // ok | bad | note
  li.append(span("fair-symbol", { ok: "✓", bad: "✗", note: "⚠", info: "○" }[state]), span("fair-text", text));
  return li;
}

const FAIR_STOPS = {
  count: () => t("fair.stop_count"),
  jam: () => t("fair.stop_jam"),
  stuck: () => t("fair.stop_stuck"),
  empty: () => t("fair.stop_empty"),
  lid: () => t("fair.stop_lid"),
  aborted: () => t("fair.stop_aborted"),
  fault: () => t("fair.stop_fault"),
};

function fairMixText(shuffle) {
  const count = shuffle.contributions.length;
  if (shuffle.open) {
    if (count === 0) return t("fair.mix_none");
    return count === 1 ? t("fair.mix_one") : t("fair.mix_many", { count });
  }
  if (count === 0) return t("fair.mix_closed_none");
  return count === 1 ? t("fair.mix_closed_one") : t("fair.mix_closed_many", { count });
}

function fairMineText(shuffle) {
  const entry = fairMemory()[shuffle.commitment] ?? {};
  const place = entry.mine ? shuffle.contributions.indexOf(entry.mine) + 1 : 0;
  if (place) return t("fair.mine_in", { place });
  // Worded as the daemon's refusals are: the page may know it before it sends (late), or after a reload.
  if (entry.late) return t("refused.contributions_closed", { shuffle: shuffle.number });
  if (entry.full) return t("refused.contributions_full", { shuffle: shuffle.number, max: FAIR_MAX });
  if (entry.other) return t("refused.already_contributed", { shuffle: shuffle.number });
  if (fair.refused?.commitment === shuffle.commitment) return refusal(fair.refused.error);
  if (fair.sending) return t("fair.mine_adding");
  if (shuffle.open && !fairJoined()) return t("fair.mine_join");
  return "";
}

function fairRender() {
  const shuffle = fair.shuffle;
  $("fair-mix").hidden = !shuffle;
  if (shuffle) {
    $("fair-mix-text").textContent = fairMixText(shuffle);
    $("fair-mine").textContent = fairMineText(shuffle);
    const swapped = fair.swapped?.shuffle === shuffle.number;
    $("fair-swapped").hidden = !swapped;
    $("fair-swapped").textContent = swapped
      ? t("fair.swapped", { shuffle: shuffle.number, before: fair.swapped.before.slice(0, FAIR_SHORT) + "…" })
      : "";
  }
  fairRenderCheck();
}

function fairRenderCheck() {
  const checked = fair.checked;
  $("fair-check").hidden = !checked;
  if (!checked) return;
  const { shuffle, result } = checked;
  let state = "info";
  let verdict = t("fair.checking", { shuffle });
  if (result?.older) verdict = t("fair.older", { shuffle });
  else if (result?.error) [state, verdict] = ["bad", t("fair.unreadable", { shuffle, error: result.error })];
  else if (result && !result.ok) [state, verdict] = ["bad", t("fair.verdict_bad", { shuffle })];
  else if (result?.shortfalls.length) [state, verdict] = ["note", t("fair.verdict_short", { shuffle })];
  else if (result) [state, verdict] = ["ok", t("fair.verdict_ok", { shuffle })];
  $("fair-check").dataset.state = state;
  $("fair-verdict-symbol").textContent = { ok: "✓", bad: "✗", note: "✓", info: "…" }[state];
  $("fair-verdict").textContent = verdict;
  $("fair-commitment").textContent = checked.commitment ?? "";
  $("fair-seed").textContent = result?.seed ?? "";
  $("fair-seed-row").hidden = !result?.seed;
  $("fair-lines").replaceChildren(...(result && !result.error && !result.older ? fairLines(result) : []));
}

function fairLines(result) {
  const lines = [];
  if (!result.commitmentOk) lines.push(fairLine("bad", t("fair.seal_bad")));
  else if (result.seenCommitment === true) lines.push(fairLine("ok", t("fair.seal_seen")));
  else lines.push(fairLine("ok", t("fair.seal_late")));
  if (result.seenCommitment === false) {
    lines.push(fairLine("bad", t("fair.seal_other", { seen: fair.watched.get(fair.checked.shuffle) ?? "" })));
  }
  if (result.late) lines.push(fairLine("info", t("fair.mine_late_check")));
  else if (result.mine?.ok) {
    lines.push(fairLine("ok", t("fair.mine_ok", { place: result.mine.place, count: result.contributions })));
  }
  else if (result.mine) lines.push(fairLine("bad", t("fair.mine_missing")));
  else lines.push(fairLine("info", t("fair.mine_none", { count: result.contributions })));
  if (result.seenContributions === true) lines.push(fairLine("ok", t("fair.seen_ok")));
  if (result.seenContributions === false) lines.push(fairLine("bad", t("fair.seen_bad")));
  if (result.profile?.ok === false) lines.push(fairLine("bad", t("fair.profile_bad", result.profile)));
  if (result.mismatch) {
    const m = result.mismatch;
    const shown = { ...m, recorded: JSON.stringify(m.recorded), replayed: JSON.stringify(m.replayed) };
    lines.push(fairLine("bad", t("fair.replay_bad", shown)));
  } else {
    const replayed = result.presses === 1 ? t("fair.replay_ok_one") : t("fair.replay_ok", { presses: result.presses });
    lines.push(fairLine("ok", replayed));
  }
  for (const s of result.shortfalls) {
    const why = FAIR_STOPS[s.stop]?.() ?? t("fair.stop_unknown");
    const values = { ...s, why };
    let text;
    if (s.dispensed === null) text = s.cards === 1 ? t("fair.short_unknown_one", values) : t("fair.short_unknown", values);
    else text = s.cards === 1 ? t("fair.short_one", values) : t("fair.short", values);
    lines.push(fairLine("note", text));
  }
  return lines;
}

// ---- The page's events ----

// Events the last state read already holds (`seenId`) change nothing but a contribution's place, which is checked.
function fairEvent({ id, type, data }) {
  const shuffle = fair.shuffle;
  const fresh = id > fair.seenId;
  if (type === "shuffle.started" && fresh) {
    fairFollow({ number: data.shuffle, commitment: data.commitment, profile: data.profile, presses: 0 });
  } else if (type === "shuffle.contributed" && shuffle?.number === data.shuffle) {
    if (data.index === shuffle.contributions.length) {
      shuffle.contributions = [...shuffle.contributions, data.value];
      fairNote(shuffle.commitment, { seen: shuffle.contributions });
      fairRender();
    } else if (data.index > shuffle.contributions.length) {
      fairRefresh().catch(() => {}); // some were missed: the state has them all
    }
  } else if (type === "button.pressed" && fresh && shuffle && data.press) {
    shuffle.presses = Math.max(shuffle.presses, data.press);
    shuffle.open = false;
    fairRender();
  } else if (type === "shuffle.ended" && data.shuffle >= fair.newestEnded) {
    fair.newestEnded = data.shuffle;
    fairCheck(data.shuffle, data.commitment);
  }
}

function fairStart() {
  fair.seenId = ui.snapshotId;
  if (ui.shuffle) fairFollow(ui.shuffle);
  // Joining (access.js shows the role) lets this phone add its bytes to a shuffle that still takes them.
  new MutationObserver(() => fairContribute()).observe($("role"), { attributes: true, childList: true });
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  event: fairEvent,
  render: fairRender,
  connected: () => fairRefresh().catch(() => {}),
  start: fairStart,
};
