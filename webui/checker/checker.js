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

export function checkerLines(record, seen) {
  const r = fairVerify(record, seen);
  if (r.older) return { state: "unreadable", lines: ["a record of the first format: check it with uno-launcher verify"] };
  if (r.error) return { state: "unreadable", lines: [r.error] };
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

function check() {
  let record;
  try {
    record = JSON.parse(document.getElementById("record").value);
  } catch (error) {
    show("unreadable", [`not valid JSON: ${error.message}`]);
    return;
  }
  const commitment = document.getElementById("commitment").value.trim();
  const mine = document.getElementById("mine").value.trim();
  const { state, lines } = checkerLines(record, { commitment: commitment || null, mine: mine || null });
  show(state, lines);
}

document.getElementById("check").addEventListener("click", check);
document.getElementById("file").addEventListener("change", async (event) => {
  const file = event.target.files[0];
  if (!file) return;
  document.getElementById("record").value = await file.text();
  check();
});
