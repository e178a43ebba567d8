// Launcher care, for the admin only: how the launcher wears over its life and since its roller was last cleaned
// (GET /api/care), the hint when the jams ask for a cleaning, and the cleaning done (POST /api/care/cleaned), with
// a confirmation first. The panel sits in the admin's part of the page, which access.js shows to an admin session.
import { access, act } from "./access.js";
import { request } from "./api.js";
import { $, ui, t, span, toast, decimal } from "./core.js";

const care = {
  report: null, // the last answer of /api/care
  loading: false,
  confirming: false, // "Roller cleaned?" is asked
};

// The ends of a fire: the counters may have changed.
const FIRE_ENDS = new Set(["launcher.fired", "launcher.jammed", "launcher.empty", "launcher.stopped", "launcher.dealt"]);

function isAdmin() {
  return access.role === "admin";
}

function careShown() {
  return isAdmin() && $("access").open;
}

function perThousand(rate) {
  return rate === null ? "–" : t("care.per_1000", { rate: decimal(rate, 1) });
}

function when(seconds) {
  return new Intl.DateTimeFormat(ui.lang, { dateStyle: "medium", timeStyle: "short" }).format(seconds * 1000);
}

// One row: its label, then the lifetime and since-cleaning values, each one or more lines (a count, its rate).
function careRow(label, lines) {
  const row = document.createElement("tr");
  const head = document.createElement("th");
  head.scope = "row";
  head.textContent = label;
  row.append(head);
  for (const period of ["lifetime", "since_cleaning"]) {
    const cell = document.createElement("td");
    cell.className = "num";
    cell.append(...lines(care.report[period]).map((text) => span("care-line", text)));
    row.append(cell);
  }
  return row;
}

function careRows() {
  const rated = (name) => (p) => [String(p[name]), perThousand(p.per_1000_fires[name])];
  return [
    careRow(t("care.fires"), (p) => [String(p.fires)]),
    careRow(t("care.cards"), (p) => [String(p.cards)]),
    careRow(t("care.jams"), rated("jams")),
    careRow(t("care.stuck"), rated("stuck")),
    careRow(t("care.timeouts"), rated("timeouts")),
    careRow(t("care.recent_jams", { fires: care.report.rule.over_fires }), (p) => [
      t("care.recent", { jams: p.recent.jams, fires: p.recent.fires }),
      perThousand(p.recent.jams_per_1000_fires),
    ]),
    careRow(t("care.motor"), (p) => [t("care.minutes", { minutes: decimal(p.motor_s / 60, 1) })]),
  ];
}

function renderCare() {
  $("care").hidden = !isAdmin() || care.report === null;
  if (care.report === null) return;
  const { lifetime, since_cleaning: cleaning, rule } = care.report;
  $("care-hint").hidden = !care.report.clean_roller;
  $("care-rows").replaceChildren(...careRows());
  const cleaned = cleaning.since > lifetime.since ? when(cleaning.since) : t("care.never_cleaned");
  $("care-since").textContent = t("care.since", { lifetime: when(lifetime.since), cleaned });
  $("care-rule").textContent = t("care.rule", {
    jams: rule.jams_per_1000_fires,
    fires: rule.over_fires,
    min: rule.min_jams,
  });
  $("care-clean").hidden = care.confirming;
  $("care-confirm").hidden = !care.confirming;
}

async function loadCare() {
  if (care.loading || !careShown()) return;
  care.loading = true;
  try {
    care.report = await request("GET", "/api/care");
  } catch (error) {
    // Offline: the stream's own banner says so; the last numbers stay.
    if (error.status !== 0) care.report = null;
  } finally {
    care.loading = false;
    renderCare();
  }
}

function askCleaned(asking) {
  care.confirming = asking;
  renderCare();
  (asking ? $("care-confirm-yes") : $("care-clean")).focus();
}

function cleaned() {
  care.confirming = false;
  act("POST", "/api/care/cleaned", {}, (body) => {
    care.report = body;
    toast(t("care.done"));
    renderCare();
  });
  renderCare();
}

function startCare() {
  $("access").addEventListener("toggle", loadCare);
  // Signing in as the admin shows the admin's part (access.js): the counters come with it.
  new MutationObserver(() => (isAdmin() ? loadCare() : renderCare())).observe($("pins"), {
    attributes: true,
    attributeFilter: ["hidden"],
  });
  $("care-clean").addEventListener("click", () => askCleaned(true));
  $("care-confirm-no").addEventListener("click", () => askCleaned(false));
  $("care-confirm-yes").addEventListener("click", cleaned);
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  render: renderCare,
  event: (event, fresh) => fresh && FIRE_ENDS.has(event.type) && loadCare(),
  start: startCare,
};
