// The verifier of docs/FAIRNESS.md in plain JavaScript, with no import and no network: the phone page's check
// (verify.js) and the standalone checker (scripts/build-checker inlines this very file into uno-checker.html) run the
// same code. SHA-256 and HMAC are done here: crypto.subtle exists only on secure pages, and the phones open the
// launcher over plain http on the home network; a checker opened from the phone's files has none of it either.

// Today's (commit, then reveal); the one with contributions in the clear; before runs were carried; before the rename.
const FAIR_SEALED = "uno-launcher-shuffle/5";
const FAIR_FORMATS = [FAIR_SEALED, "uno-launcher-shuffle/4", "uno-launcher-shuffle/3", "uno-launcher-round/2"];
// The first bytes of a format-4 (and older) key: the format's name when that key was made, kept through the rename.
const FAIR_LABEL = "uno-launcher-round/2";
const FAIR_SEAL_LABEL = "uno-launcher-seal/5";
export const FAIR_MAX = 32; // contributions a shuffle takes at most
const FAIR_HEX = /^[0-9a-f]{32}$/;
const FAIR_HEX64 = /^[0-9a-f]{64}$/;
const FAIR_HEX96 = /^[0-9a-f]{96}$/;
// The drand quicknet beacon (launcher/fairplay/beacon.py): its chain hash, public key and the tag its rounds are hashed with.
export const FAIR_CHAIN = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971";
export const FAIR_DRAND_KEY =
  "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc2" +
  "2b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a";
export const FAIR_DRAND_DST = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_";

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

function fairFrame(text) {
  const bytes = fairUtf8(text);
  return fairBytes(fairBe32(bytes.length), bytes);
}

// A format-4 (and older) key: SHA-256 of the label, a zero byte, the framed seed, the count, the framed contributions.
export function fairShuffleKey(seed, contributions) {
  const head = [fairUtf8(FAIR_LABEL), Uint8Array.of(0), fairFrame(seed), fairBe32(contributions.length)];
  return fairSha256(fairBytes(...head, ...contributions.map(fairFrame)));
}

// Format 5's seal: SHA-256 of its label, a zero byte, the framed seed and the framed profile text, in hex.
export function fairSeal(seed, profileText) {
  return fairHex(fairSha256(fairBytes(fairUtf8(FAIR_SEAL_LABEL), Uint8Array.of(0), fairFrame(seed), fairFrame(profileText))));
}

// A phone's commitment: the SHA-256 of its bytes' 32 hex characters, in hex.
export function fairCommitmentOf(value) {
  return fairHex(fairSha256(fairUtf8(value)));
}

// A drand round's randomness: the SHA-256 of its signature's bytes, in hex.
export function fairRandomnessOf(signature) {
  return fairHex(fairSha256(Uint8Array.from(signature.match(/../g), (h) => parseInt(h, 16))));
}

// Format 5's key: SHA-256 of its label, a zero byte, the framed seal and seed, the count, then for each commitment in
// order the framed commitment and the framed value ("" for one never revealed); then, for a drand round bound, the
// framed chain hash, the round as 8 bytes big-endian and its framed randomness ("" when it was not had).
export function fairSealedKey(seal, seed, entries, beacon = null) {
  const head = [fairUtf8(FAIR_SEALED), Uint8Array.of(0), fairFrame(seal), fairFrame(seed), fairBe32(entries.length)];
  const parts = entries.flatMap((e) => [fairFrame(e.commitment), fairFrame(e.value ?? "")]);
  if (beacon) {
    const round = fairBytes(fairBe32(Math.floor(beacon.round / 2 ** 32)), fairBe32(beacon.round >>> 0));
    const randomness = beacon.signature ? fairRandomnessOf(beacon.signature) : "";
    parts.push(fairFrame(FAIR_CHAIN), round, fairFrame(randomness));
  }
  return fairSha256(fairBytes(...head, ...parts));
}

// Format 5's optional drand round: {round, signature (or null: not had in time), stated: the record's randomness}.
function fairBeacon(record) {
  if (!("beacon" in record)) return null;
  const b = record.beacon;
  const shape =
    typeof b === "object" &&
    b !== null &&
    Object.keys(b).length === 4 &&
    b.chain === FAIR_CHAIN &&
    Number.isSafeInteger(b.round) &&
    b.round >= 1 &&
    ((b.signature === null && b.randomness === null) || (FAIR_HEX96.test(b.signature) && FAIR_HEX64.test(b.randomness)));
  if (!shape) fairRefuse("beacon", b, "drand quicknet's {chain, round, signature, randomness}");
  return { round: b.round, signature: b.signature, stated: b.randomness };
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

// Format 5's head: the profile text the seal covers, the seal, and each commitment with its value (or null).
function fairSealedHead(record, seed, commitment) {
  const text = fairField(record, "profile", (v) => typeof v === "string", "the text of a JSON object");
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    fairRefuse("profile", text, "the text of a JSON object");
  }
  const entry = (e) =>
    typeof e === "object" &&
    e !== null &&
    Object.keys(e).length === 2 &&
    FAIR_HEX64.test(e.commitment) &&
    (e.value === null || FAIR_HEX.test(e.value));
  const valid = (v) => Array.isArray(v) && v.length <= FAIR_MAX && v.every(entry);
  const entries = fairField(record, "contributions", valid, "up to 32 of {commitment: 64 hex, value: 32 hex or null}");
  const mismatched = [];
  const counted = entries.map((e, i) => {
    if (e.value === null || fairCommitmentOf(e.value) === e.commitment) return e;
    mismatched.push(i + 1);
    return { commitment: e.commitment, value: null };
  });
  const beacon = fairBeacon(record);
  return {
    profile: fairProfile(parsed),
    profileText: text,
    commitmentOk: fairSeal(seed, text) === commitment,
    key: fairSealedKey(commitment, seed, counted, beacon),
    beacon: beacon && {
      round: beacon.round,
      signature: beacon.signature,
      randomnessOk: !beacon.signature || fairRandomnessOf(beacon.signature) === beacon.stated,
    },
    values: counted.filter((e) => e.value !== null).map((e) => e.value),
    commitments: entries.map((e) => e.commitment),
    withheld: counted.flatMap((e, i) => (e.value === null && !mismatched.includes(i + 1) ? [i + 1] : [])),
    mismatched,
  };
}

// Formats 2 to 4: the profile as an object, only the seed committed, contributions in the clear.
function fairClearHead(record, seed, commitment) {
  const profile = fairProfile(fairField(record, "profile", (v) => typeof v === "object" && v !== null, "an object"));
  const hex = (v) => Array.isArray(v) && v.length <= FAIR_MAX && v.every((c) => FAIR_HEX.test(c));
  const values = fairField(record, "contributions", hex, "up to 32 values of 32 lowercase hex characters");
  return {
    profile,
    commitmentOk: fairHex(fairSha256(fairUtf8(seed))) === commitment,
    key: fairShuffleKey(seed, values),
    values,
    commitments: values,
    withheld: [],
    mismatched: [],
  };
}

// Check a record against its own commitment and a replay, and against what this phone saw (`seen`, all optional):
// {commitment: shown before the first press, mine: this phone's bytes, index: their place when taken,
//  contributions: the commitments (format 5; older: the values) this phone saw published, in order,
//  profile: the name the shuffle was announced with, profileText: the profile text it was announced with,
//  beaconRound: the drand round announced when the commitments closed}.
export function fairVerify(record, seen = {}) {
  const result = { error: null, format: record?.format, presses: 0, contributions: 0, mismatch: null, shortfalls: [] };
  try {
    if (typeof record !== "object" || record === null || Array.isArray(record)) {
      throw new FairUnreadable("not a JSON object");
    }
    if (record.format === undefined || record.format === "uno-launcher-round/1") return { ...result, older: true };
    if (!FAIR_FORMATS.includes(record.format)) fairRefuse("format", record.format, FAIR_FORMATS.join(" or "));
    const seed = fairField(record, "seed", (v) => typeof v === "string", "a string");
    const commitment = fairField(record, "commitment", (v) => typeof v === "string", "a string").toLowerCase();
    const sealed = record.format === FAIR_SEALED;
    const head = (sealed ? fairSealedHead : fairClearHead)(record, seed, commitment);
    const restarts = record.restarts ?? [];
    if (!Array.isArray(restarts) || !restarts.every(fairWhole)) fairRefuse("restarts", restarts, "press counts");
    const carried = FAIR_FORMATS.slice(0, 2).includes(record.format) ? fairCarried(head.profile, record) : undefined;
    const outcomes = fairField(record, "outcomes", Array.isArray, "an array");
    outcomes.forEach((o, i) => {
      const fields = ["press", "cards", "jackpot", "pause_ms", "dispensed", "stop"];
      if (typeof o !== "object" || o === null || !fields.every((f) => f in o)) {
        fairRefuse(`outcomes[${i}]`, o, `an object with ${fields.join(", ")}`);
      }
    });
    result.presses = outcomes.length;
    result.contributions = head.commitments.length;
    result.withheld = head.withheld;
    result.mismatched = head.mismatched;
    result.commitmentOk = head.commitmentOk;
    result.beacon = head.beacon ?? null; // its signature is checked by the standalone checker, not here
    result.seenCommitment = seen.commitment ? seen.commitment.toLowerCase() === commitment : null;
    // A record that names another round than the one announced, or none, was keyed with another (or none).
    result.seenBeacon = seen.beaconRound == null ? null : result.beacon?.round === seen.beaconRound;
    if (seen.mine) {
      const place = head.values.indexOf(seen.mine);
      const mine = sealed ? record.contributions[seen.index]?.value : head.values[seen.index];
      const ok = place >= 0 && (seen.index == null || mine === seen.mine);
      result.mine = { ok, place: (sealed ? record.contributions.findIndex((e) => e.value === seen.mine) : place) + 1 };
    }
    if (seen.contributions?.length) {
      result.seenContributions =
        seen.contributions.every((value, i) => head.commitments[i] === value) &&
        (!sealed || seen.contributions.length === head.commitments.length);
    }
    if (seen.profile) {
      const same = seen.profile === head.profile.name && (!sealed || !seen.profileText || seen.profileText === head.profileText);
      result.profile = { ok: same, recorded: head.profile.name, shown: seen.profile };
    }
    const replayed = fairReplay(head.profile, head.key, outcomes.length, restarts, carried);
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
      !result.mismatched.length &&
      result.seenCommitment !== false &&
      result.mine?.ok !== false &&
      result.beacon?.randomnessOk !== false &&
      result.seenBeacon !== false &&
      result.seenContributions !== false &&
      result.profile?.ok !== false;
  } catch (error) {
    if (!(error instanceof FairUnreadable)) throw error;
    return { ...result, error: error.message };
  }
  return result;
}
