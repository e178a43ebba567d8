// The standalone checker's page (scripts/build-checker inlines it after fairverify.js): reads a record pasted or
// chosen, checks it with fairVerify, and words the verdict as `uno-launcher verify` does (launcher/fairness.py).
const STOPS = { count: "the hopper's count ran out", null: "not known: the daemon stopped before the press ended" };

function python(value) {
  // Values as the Python report shows them (repr of what JSON holds).
  if (value === true) return "True";
  if (value === false) return "False";
  if (value === null || value === undefined) return "None";
  if (typeof value === "string") return `'${value}'`;
  return JSON.stringify(value);
}

// What the record's drand round proves, as launcher/fairness.py words it; `signed`: its signature is the League's.
function beaconLines(beacon, signed) {
  if (!beacon) return [];
  if (!beacon.signature) {
    return [
      `NOTE: drand quicknet round ${beacon.round} was not had in time: the key was fixed without it, as at a table ` +
        "without internet, and whoever ran the launcher could choose between two outcomes",
    ];
  }
  const lines = beacon.randomnessOk ? [] : ["FAILED: the beacon's randomness is not the SHA-256 of its signature"];
  lines.push(
    signed
      ? `OK: the key mixes drand quicknet round ${beacon.round}, signed by the League of Entropy`
      : `FAILED: the signature of drand quicknet round ${beacon.round} is not the League of Entropy's`,
  );
  return lines;
}

// The verdict and its lines; `verifyRound(round, signature)` checks a drand signature (the vendored BLS12-381).
export function checkerLines(record, seen, verifyRound) {
  const r = fairVerify(record, seen);
  if (r.older) return { state: "unreadable", lines: ["a record of the first format: check it with uno-launcher verify"] };
  if (r.error) return { state: "unreadable", lines: [r.error] };
  const signed = r.beacon?.signature ? verifyRound(r.beacon.round, r.beacon.signature) : true;
  r.ok = r.ok && signed;
  const lines = [];
  if (r.ok) {
    const name = python(record.profile && typeof record.profile === "object" ? record.profile.name : JSON.parse(record.profile).name);
    lines.push(
      `OK: the seed matches its commitment and, with its ${r.contributions} contribution(s), replays all ` +
        `${r.presses} presses of profile ${name} exactly`,
    );
  }
  if (r.seenCommitment === false) lines.push("FAILED: the record's commitment is not the one you saw before the first press");
  if (!r.commitmentOk) lines.push("FAILED: the seed does not match the commitment published at the shuffle's start");
  if (r.mine && !r.mine.ok) lines.push(`FAILED: your contribution ${seen.mine} is not in the record`);
  for (const n of r.mismatched) lines.push(`FAILED: contribution ${n}'s value is not the one committed`);
  lines.push(...beaconLines(r.beacon, signed));
  if (r.mismatch) {
    const m = r.mismatch;
    lines.push(`FAILED: press ${m.press}: recorded ${m.field} = ${python(m.recorded)}, the seed gives ${python(m.replayed)}`);
  }
  for (const n of r.withheld) {
    lines.push(
      `NOTE: contribution ${n} was committed and never revealed: it counts by its commitment alone, and whoever ` +
        "held it could choose between two outcomes",
    );
  }
  for (const s of r.shortfalls) {
    const came = s.dispensed === null ? "an unknown number of cards" : `${s.dispensed}`;
    lines.push(`NOTE: press ${s.press}: the seed gives ${s.cards} cards, ${came} came out (${STOPS[s.stop] ?? s.stop})`);
  }
  return { state: r.ok ? "ok" : "failed", lines };
}

function show(state, lines) {
  const verdict = document.getElementById("verdict");
  verdict.dataset.state = state;
  verdict.textContent = { ok: "✓ Fair", failed: "✗ Not fair", unreadable: "✗ Not a record this checker can read" }[state];
  document.getElementById("lines").textContent = lines.join("\n");
}

// @noble/curves' BLS12-381 (MIT: the licence is at the top of this page), bundled, gzipped and inlined as base64 by
// scripts/vendor-noble to keep this page under 100 kB; unpacked by the browser's own gzip the first time it is needed.
let checkerBls = null;
async function blsVerifier() {
  if (!checkerBls) {
    const packed = Uint8Array.from(atob(CHECKER_NOBLE_BLS), (c) => c.charCodeAt(0));
    const unpacked = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"));
    const text = await new Response(unpacked).text();
    checkerBls = new Function(`${text};return nobleBls;`)(); // the constant above, never anything a record holds
  }
  return (round, signature) => checkerBls.drandG1Verify(round, signature, FAIR_DRAND_KEY, FAIR_DRAND_DST);
}

// A QR code's text (launcher/record_qr.py): UNO-SHUFFLE: then the deflated record in digits, 7 bytes to 17 digits.
const QR_PREFIX = "UNO-SHUFFLE:";
const QR_DIGITS = [0, 3, 5, 8, 10, 13, 15, 17];

async function fromQrText(text) {
  const digits = text.trim().slice(QR_PREFIX.length);
  if (!/^[0-9]+$/.test(digits)) throw new Error(`a shuffle's QR code text is ${QR_PREFIX} and digits`);
  const bytes = [];
  for (let at = 0; at < digits.length; ) {
    const left = digits.length - at;
    const size = left >= 17 ? 7 : QR_DIGITS.indexOf(left);
    if (size <= 0) throw new Error("the QR code's digits are cut short: scan it again");
    let value = BigInt(digits.slice(at, at + QR_DIGITS[size]));
    if (value >= 256n ** BigInt(size)) throw new Error("the QR code's digits are not a record's: scan it again");
    const group = [];
    for (let i = 0; i < size; i++, value >>= 8n) group.unshift(Number(value & 255n));
    bytes.push(...group);
    at += QR_DIGITS[size];
  }
  const inflated = new Blob([Uint8Array.from(bytes)]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Response(inflated).text();
}

async function check() {
  let record;
  let text = document.getElementById("record").value;
  try {
    if (text.trim().startsWith(QR_PREFIX)) text = await fromQrText(text);
  } catch (error) {
    show("unreadable", [`the QR code's text does not hold a record (${error.message})`]);
    return;
  }
  try {
    record = JSON.parse(text);
  } catch (error) {
    show("unreadable", [`not valid JSON: ${error.message}`]);
    return;
  }
  const commitment = document.getElementById("commitment").value.trim();
  const mine = document.getElementById("mine").value.trim();
  const verdict = document.getElementById("verdict");
  verdict.dataset.state = "checking";
  verdict.textContent = "Checking…";
  document.getElementById("lines").textContent = "";
  const verifyRound = record?.beacon?.signature ? await blsVerifier() : null;
  const { state, lines } = checkerLines(record, { commitment: commitment || null, mine: mine || null }, verifyRound);
  show(state, lines);
}

document.getElementById("check").addEventListener("click", check);
document.getElementById("file").addEventListener("change", async (event) => {
  const file = event.target.files[0];
  if (!file) return;
  document.getElementById("record").value = await file.text();
  check();
});
