// Fairness checked on the phone itself (docs/FAIRNESS.md). While a shuffle takes commitments this phone commits to
// 16 random bytes of its own (their SHA-256); once the first press has closed the commitments, and only then, it
// reveals them. When the shuffle ends it fetches the record and replays it with the verifier of fairverify.js (the
// same file the standalone checker is built from), and says in the reader's language whether the shuffle was fair, or
// what did not match. It keeps what it was shown and what it added in localStorage, and goes on showing the
// commitment after the reveal. crypto.getRandomValues, which makes the bytes, works on every page.
import { access } from "./access.js";
import { readState, request, refusal } from "./api.js";
import { $, ui, t, stored, remember, span } from "./core.js";
import { FAIR_MAX, fairCommitmentOf, fairHex, fairVerify } from "./fairverify.js";

const FAIR_STORE = "uno-launcher.access.party_lock"; // {commitment: what this phone saw and added in that shuffle}, newest last
const FAIR_KEEP = 20; // shuffles remembered
const FAIR_CONTRIBUTE = "/api/shuffles/current/contributions";
const FAIR_REVEAL = "/api/shuffles/current/reveals";
const FAIR_SHORT = 12; // hex characters of a commitment shown before "…"

const fair = {
  // The shuffle in play: {number, commitment, profile, profileText, presses, phase, commitments, revealed}.
  shuffle: null,
  watched: new Map(), // shuffle number -> the commitment this page was first shown for it
  swapped: null, // {shuffle, before}: the commitment of the shuffle in play changed while this page watched
  sending: false, // a commitment or a reveal is on its way
  refused: null, // {commitment, error}: this phone's commitment or reveal refused for a reason its memory does not keep
  checked: null, // the last ended shuffle: {shuffle, commitment, result} (result null while it is checked)
  newestEnded: 0, // the highest shuffle.ended number seen, so older ones in the history are not checked
  seenId: 0, // the newest event the last state read holds: the stream's older events are in it already
  // A stream opened again replays what it missed (a seal, then its fix): this phone sends nothing until the state
  // read of that reconnection says which phase the shuffle is in now, so it never reveals into a key already fixed.
  catchingUp: false,
};

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

// A shuffle as the state or an event shows it: remembered with the commitment, and this phone's part played.
export function fairFollow(shuffle) {
  if (!shuffle?.commitment) return;
  const watched = fair.watched.get(shuffle.number);
  if (watched && watched !== shuffle.commitment) fair.swapped = { shuffle: shuffle.number, before: watched };
  if (!watched) fair.watched.set(shuffle.number, shuffle.commitment);
  let commitments = Array.isArray(shuffle.commitments) ? shuffle.commitments : [];
  let revealed = Array.isArray(shuffle.revealed) ? shuffle.revealed : commitments.map(() => null);
  let presses = shuffle.presses ?? 0;
  let phase = shuffle.phase ?? (presses ? "fixed" : "committing");
  const known = fair.shuffle;
  if (known?.number === shuffle.number && known.commitment === shuffle.commitment) {
    // The same shuffle again (a state read can be older than events already shown): what is known only grows.
    if (known.commitments.length > commitments.length) [commitments, revealed] = [known.commitments, known.revealed];
    revealed = revealed.map((value, i) => value ?? known.revealed[i] ?? null);
    presses = Math.max(presses, known.presses);
    const order = ["committing", "revealing", "fixed"];
    phase = order[Math.max(order.indexOf(phase), order.indexOf(known.phase))];
  }
  const { number, commitment, profile } = shuffle;
  const profileText = shuffle.profile_text ?? (known?.number === number ? known.profileText : undefined);
  fair.shuffle = { number, commitment, profile, profileText, presses, phase, commitments, revealed };
  const before = fairMemory()[commitment]?.before || (presses === 0 && phase === "committing");
  fairNote(commitment, { shuffle: number, profile, profileText, before });
  if (shuffle.beacon_round != null) fairNote(commitment, { beaconRound: shuffle.beacon_round });
  if (phase !== "committing") fairSealed(commitments);
  fairRender();
  fairTakePart();
}

// The commitments as they closed: what this phone reveals against, and checks the record against at the end.
function fairSealed(commitments) {
  const shuffle = fair.shuffle;
  const entry = fairMemory()[shuffle.commitment] ?? {};
  if (!entry.sealed) fairNote(shuffle.commitment, { sealed: commitments });
}

async function fairRefresh() {
  let state;
  fair.catchingUp = true;
  try {
    state = await readState();
  } catch (error) {
    if (error.status === 0) throw error;
    return;
  } finally {
    fair.catchingUp = false;
  }
  if (!state) {
    fairTakePart(); // older than events already followed: those say the phase
    return;
  }
  fair.seenId = Math.max(fair.seenId, state.last_event_id ?? 0);
  fairFollow(state.shuffle);
}

// This phone's part in the shuffle in play: its commitment while commitments are open, its bytes once they closed.
function fairTakePart() {
  const shuffle = fair.shuffle;
  if (!shuffle || fair.sending || fair.catchingUp || !fairJoined()) return;
  const entry = fairMemory()[shuffle.commitment] ?? {};
  if (entry.late || entry.full || entry.other || entry.revealLate) return;
  if (shuffle.phase === "committing") {
    if (entry.index == null && !(entry.mine && shuffle.commitments.includes(fairCommitmentOf(entry.mine)))) {
      fairSend(FAIR_CONTRIBUTE, shuffle, entry);
    }
  } else if (shuffle.phase === "revealing" && entry.mine && !entry.revealed) {
    if (shuffle.commitments.includes(fairCommitmentOf(entry.mine))) fairSend(FAIR_REVEAL, shuffle, entry);
  } else if (!entry.mine) {
    fairNote(shuffle.commitment, { late: true }); // joined, and the first press came before this phone committed
    fairRender();
  }
}

// Refusals this phone remembers for the shuffle, by their code.
const FAIR_REFUSED = {
  contributions_closed: { late: true },
  contributions_full: { full: true },
  already_contributed: { other: true },
  reveals_closed: { revealLate: true },
};

async function fairSend(path, shuffle, entry) {
  const revealing = path === FAIR_REVEAL;
  const value = entry.mine ?? fairHex(crypto.getRandomValues(new Uint8Array(16)));
  if (!entry.mine) fairNote(shuffle.commitment, { mine: value }); // kept first: a lost try sends the same bytes again
  const body = revealing ? { shuffle: shuffle.number, value } : { shuffle: shuffle.number, commitment: fairCommitmentOf(value) };
  fair.sending = true;
  fair.refused = null;
  fairRender();
  try {
    // The phone is not asked to join: it tries again once it does.
    const answer = await request("POST", path, body, { refused: false });
    fairNote(shuffle.commitment, revealing ? { revealed: true } : { index: answer.index });
    if (revealing) shuffle.revealed[answer.index] = value;
    else if (shuffle.commitments.length === answer.index) {
      shuffle.commitments = [...shuffle.commitments, body.commitment];
      shuffle.revealed = [...shuffle.revealed, null];
    }
  } catch (error) {
    // Offline (status 0): tried again when the stream reconnects. join_required: tried again once this phone joins;
    // reveal_early: again when the commitments close; shuffle_over, shuffle_not_started: a newer shuffle is coming.
    const refused = error.status ? FAIR_REFUSED[error.code] : undefined;
    if (refused?.other && entry.index != null) {
      // This phone's own commitment, taken already (the answer came before the list showed it): nothing to change.
    } else if (refused) {
      fairNote(shuffle.commitment, refused);
    } else if (error.status && error.code !== "reveal_early") {
      fair.refused = { commitment: shuffle.commitment, error };
    }
    if (refused?.late) shuffle.phase = shuffle.phase === "committing" ? "revealing" : shuffle.phase;
  } finally {
    fair.sending = false;
    fairRender();
  }
  // Something changed while this was on its way (a newer shuffle, or the commitments closed): take part in that.
  const now = fair.shuffle;
  if (now && (now.commitment !== shuffle.commitment || (!revealing && now.phase === "revealing"))) fairTakePart();
}

// The record of an ended shuffle, checked against what this phone saw of it.
async function fairCheck(number, announced) {
  fair.checked = { shuffle: number, commitment: fair.watched.get(number) ?? announced, result: null };
  $("fair-qr").hidden = true; // the code of the shuffle checked before
  fairRender();
  let result;
  try {
    const record = await request("GET", `/api/shuffles/${encodeURIComponent(number)}`);
    const key = fair.watched.get(number) ?? record.commitment;
    const entry = fairMemory()[key] ?? {};
    // This phone's bytes count once its commitment was taken (a reveal refused as too late is checked too: a
    // shuffle fixed without them is not one this phone can call fair).
    const mine = entry.mine && entry.index != null ? entry.mine : null;
    result = fairVerify(record, {
      commitment: entry.before ? key : null,
      mine,
      index: entry.index,
      contributions: entry.sealed ?? entry.seen,
      profile: entry.profile,
      profileText: entry.profileText,
      beaconRound: entry.beaconRound,
    });
    result.late = Boolean(entry.late);
    result.revealLate = Boolean(entry.revealLate);
    result.beaconAnnounced = entry.beaconRound;
    result.seed = record.seed;
    fair.checked.commitment = entry.before ? key : record.commitment;
  } catch (error) {
    result = { error: error.status ? `HTTP ${error.status}` : String(error.message || error) };
  }
  if (fair.checked?.shuffle !== number) return; // a newer shuffle ended meanwhile
  fair.checked.result = result;
  fairRender();
  if (result.error || !result.ok) $("fair-check").open = true;
  if (!result.error && !result.older) fairQr(number);
}

// The record as one QR code (GET /api/shuffles/<n>/qr): its modules drawn on a canvas, 4 pixels each with a
// quiet zone of 4, or a word that it is too long for one.
async function fairQr(number) {
  let code;
  try {
    code = await request("GET", `/api/shuffles/${encodeURIComponent(number)}/qr`);
  } catch {
    return; // the record itself was read: its check stands without the code
  }
  if (fair.checked?.shuffle !== number) return;
  const canvas = $("fair-qr-code");
  canvas.hidden = !code.modules;
  $("fair-qr-text").textContent = code.modules ? t("fair.qr") : t("fair.qr_too_long");
  $("fair-qr").hidden = false;
  if (!code.modules) return;
  const bits = Uint8Array.from(atob(code.modules), (c) => c.charCodeAt(0));
  const scale = 4;
  canvas.width = canvas.height = (code.size + 8) * scale;
  const draw = canvas.getContext("2d");
  draw.fillStyle = "#fff";
  draw.fillRect(0, 0, canvas.width, canvas.height);
  draw.fillStyle = "#000";
  for (let i = 0; i < code.size * code.size; i++) {
    if (bits[i >> 3] & (128 >> (i & 7))) {
      draw.fillRect(((i % code.size) + 4) * scale, (Math.floor(i / code.size) + 4) * scale, scale, scale);
    }
  }
  canvas.dataset.text = code.text; // what the code says, for whoever wants to copy it from here
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
  const count = shuffle.commitments.length;
  if (shuffle.phase === "committing") {
    if (count === 0) return t("fair.mix_none");
    return count === 1 ? t("fair.mix_one") : t("fair.mix_many", { count });
  }
  if (shuffle.phase === "revealing") {
    // The key is fixed as soon as all are revealed, so a lone phone is still revealing while this shows.
    if (count === 1) return t("fair.mix_revealing_one");
    return t("fair.mix_revealing", { count, revealed: shuffle.revealed.filter((v) => v !== null).length });
  }
  if (count === 0) return t("fair.mix_closed_none");
  return count === 1 ? t("fair.mix_closed_one") : t("fair.mix_closed_many", { count });
}

function fairMineText(shuffle) {
  const entry = fairMemory()[shuffle.commitment] ?? {};
  const place = entry.mine ? shuffle.commitments.indexOf(fairCommitmentOf(entry.mine)) + 1 : 0;
  // Worded as the daemon's refusals are: the page may know it before it sends (late), or after a reload.
  if (entry.revealLate) return t("refused.reveals_closed", { shuffle: shuffle.number });
  if (place && fair.sending && shuffle.phase === "revealing") return t("fair.mine_revealing");
  if (place) return t("fair.mine_in", { place });
  if (entry.late) return t("refused.contributions_closed", { shuffle: shuffle.number });
  if (entry.full) return t("refused.contributions_full", { shuffle: shuffle.number, max: FAIR_MAX });
  if (entry.other) return t("refused.already_contributed", { shuffle: shuffle.number });
  if (fair.refused?.commitment === shuffle.commitment) return refusal(fair.refused.error);
  if (fair.sending) return t("fair.mine_adding");
  if (shuffle.phase === "committing" && !fairJoined()) return t("fair.mine_join");
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
  fairRenderChip();
}

// The header's fair mark: 🔒 while the shuffle is sealed, ✓ once this phone checked the last one, ✗ when a check
// failed or the fingerprint changed under it (then the details say what).
function fairRenderChip() {
  const swapped = fair.shuffle && fair.swapped?.shuffle === fair.shuffle.number;
  const checked = $("fair-check").hidden ? "info" : $("fair-check").dataset.state;
  const state = swapped || checked === "bad" ? "bad" : checked === "info" ? "sealed" : "ok";
  $("fair-chip").dataset.state = state;
  $("fair-chip-symbol").textContent = { sealed: "🔒", ok: "✓", bad: "✗" }[state];
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
  else if (result.revealLate && !result.mine?.ok) lines.push(fairLine("bad", t("fair.mine_withheld")));
  else if (result.mine?.ok) {
    lines.push(fairLine("ok", t("fair.mine_ok", { place: result.mine.place, count: result.contributions })));
  }
  else if (result.mine) lines.push(fairLine("bad", t("fair.mine_missing")));
  else lines.push(fairLine("info", t("fair.mine_none", { count: result.contributions })));
  if (result.seenContributions === true) lines.push(fairLine("ok", t("fair.seen_ok")));
  if (result.seenContributions === false) lines.push(fairLine("bad", t("fair.seen_bad")));
  if (result.profile?.ok === false) lines.push(fairLine("bad", t("fair.profile_bad", result.profile)));
  for (const place of result.mismatched ?? []) lines.push(fairLine("bad", t("fair.mismatched", { place })));
  for (const place of result.withheld ?? []) lines.push(fairLine("note", t("fair.withheld", { place })));
  const beacon = result.beacon;
  if (beacon && !beacon.signature) lines.push(fairLine("note", t("fair.beacon_missing", beacon)));
  else if (beacon?.randomnessOk === false) lines.push(fairLine("bad", t("fair.beacon_bad", beacon)));
  else if (beacon) lines.push(fairLine("ok", t("fair.beacon_ok", beacon)));
  // The round announced when the commitments closed, and the record keyed with another one or none.
  const seen = result.beaconAnnounced;
  if (result.seenBeacon === false && beacon) lines.push(fairLine("bad", t("fair.beacon_other", { seen, ...beacon })));
  else if (result.seenBeacon === false) lines.push(fairLine("bad", t("fair.beacon_dropped", { seen })));
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
  const ours = shuffle?.number === data.shuffle;
  if (type === "shuffle.started" && fresh) {
    const { shuffle: number, commitment, profile, profile_text } = data;
    fairFollow({ number, commitment, profile, profile_text, presses: 0, phase: "committing" });
  } else if (type === "shuffle.committed" && ours) {
    if (data.index === shuffle.commitments.length) {
      shuffle.commitments = [...shuffle.commitments, data.commitment];
      shuffle.revealed = [...shuffle.revealed, null];
      fairRender();
    } else if (data.index > shuffle.commitments.length) {
      fairRefresh().catch(() => {}); // some were missed: the state has them all
    }
  } else if (type === "shuffle.sealed" && ours && fresh) {
    // The commitments closed: kept as they were then, and this phone reveals its bytes against them.
    shuffle.commitments = data.commitments;
    shuffle.revealed = data.commitments.map((_, i) => shuffle.revealed[i] ?? null);
    shuffle.phase = "revealing";
    fairSealed(data.commitments);
    if (data.beacon_round != null) fairNote(shuffle.commitment, { beaconRound: data.beacon_round });
    fairRender();
    fairTakePart();
  } else if (type === "shuffle.revealed" && ours) {
    shuffle.revealed[data.index] = data.value;
    fairRender();
  } else if (type === "shuffle.fixed" && ours && fresh) {
    shuffle.phase = "fixed";
    fairRender();
  } else if (type === "button.pressed" && fresh && shuffle && data.press) {
    shuffle.presses = Math.max(shuffle.presses, data.press);
    shuffle.phase = "fixed"; // a press drawn from the schedule: the key is fixed
    fairRender();
  } else if (type === "shuffle.ended" && data.shuffle >= fair.newestEnded) {
    fair.newestEnded = data.shuffle;
    fairCheck(data.shuffle, data.commitment);
  }
}

function fairStart() {
  fair.seenId = ui.snapshotId;
  if (ui.shuffle) fairFollow(ui.shuffle);
  // Joining (access.js shows the role) lets this phone commit to a shuffle that still takes commitments.
  new MutationObserver(() => fairTakePart()).observe($("role"), { attributes: true, childList: true });
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  event: fairEvent,
  render: fairRender,
  connected: () => fairRefresh().catch(() => {}),
  start: fairStart,
};
