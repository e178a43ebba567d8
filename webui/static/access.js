// Who may act from this phone. Reading needs nothing; the table PIN, typed, or the invite's link (#join=<token>)
// joins the table; the admin PIN may also change the PINs and reset a fault. The session is an HttpOnly cookie: the
// page only learns its role (and, for the admin, what to see to: a table PIN too short).
import { request, refusal } from "./api.js";
import { renderButton, renderFault, reopenStream } from "./app.js";
import { $, hooks, ui, t, toast } from "./core.js";
import { showError } from "./gamestate.js";

const MADE_UP_DIGITS = { table: 6, admin: 6 }; // as `uno-launcher new-pins` makes them up
const WAITING_LOOK_MS = 1000; // how often a PIN waiting to be let in asks whether it was
const NOTICES_MS = 10000; // how often an admin's page reads its notices again while events come

export const access = {
  role: null, // "none" | "table" | "admin" once known
  notices: [], // for the admin: "table_pin_short", "store_full", "disk_full", "disk_read_only"
  noticesRead: 0, // when (ms) the admin's notices were last read while events came
  noticesDue: null, // the timer of the next such read
  joining: false, // a PIN is being checked
};

function renderAccess() {
  const role = access.role;
  const joined = role === "table" || role === "admin";
  $("role").hidden = !joined;
  $("leave").hidden = !joined;
  $("role").textContent = role === "admin" ? t("role.admin") : joined ? t("role.table") : "";
  $("join").hidden = role !== "none";
  $("admin-join").hidden = role === "admin";
  $("pins").hidden = role !== "admin";
  $("pins-short").hidden = !access.notices.includes("table_pin_short");
  // One place for what the store cannot keep: its budget spent, or its disk full or read-only.
  const store = { "store-budget": "store_full", "disk-full": "disk_full", "disk-read-only": "disk_read_only" };
  for (const [id, notice] of Object.entries(store)) $(id).hidden = !access.notices.includes(notice);
  $("store-full").hidden = !Object.values(store).some((notice) => access.notices.includes(notice));
  $("fault-reset").hidden = role !== "admin"; // the fault banner itself shows only during a fault
  ui.admin = role === "admin"; // the prompt's own Reset (game.js), redrawn with the seat below
  $("join-qr").alt = t("admin.qr");
  for (const form of [$("join"), $("admin-join")]) form.querySelector("[type=submit]").disabled = access.joining;
  ui.joined = role ? joined : null; // unknown while offline: the button stays as it was
  renderButton();
  for (const hook of hooks.seated) hook();
}

async function readRole() {
  try {
    const session = await request("GET", "/api/session");
    access.role = session.role;
    access.notices = session.notices ?? [];
  } catch (error) {
    if (error.status === 0) throw error; // offline: nothing known, nothing shown
  }
  renderAccess();
}

// While a PIN cannot be checked (someone spends the network's PIN tries), it waits for a person at the table to let
// it in: the phone shows its code big, to be typed on a joined phone (or the launcher's button held), and looks
// again each second, counting down, until it is let in, told its PIN was wrong, or the wait is over (a refusal).
async function waitToBeLetIn(answer, box) {
  let body = answer;
  try {
    while (body.waiting) {
      showError(`${box}-waiting`, t("join.waiting", body));
      showError(`${box}-code`, t("join.code", body));
      await new Promise((done) => setTimeout(done, WAITING_LOOK_MS));
      body = await request("POST", "/api/session", { waiting: body.waiting });
    }
  } finally {
    showError(`${box}-waiting`, "");
    showError(`${box}-code`, "");
  }
  return body;
}

// POST the PIN (or the invite's token); true once joined. A refusal (wrong PIN and the tries left, a wait) shows
// in the box `errorId`.
async function join(proof, errorId) {
  if (access.joining) return false;
  access.joining = true;
  showError(errorId, "");
  renderAccess();
  try {
    const answer = await request("POST", "/api/session", proof);
    access.role = (await waitToBeLetIn(answer, errorId.replace(/-error$/, ""))).role;
    if (access.role === "admin") await readRole(); // its notices
    reopenStream();
    return true;
  } catch (error) {
    showError(errorId, refusal(error));
    return false;
  } finally {
    access.joining = false;
    renderAccess();
  }
}

async function submitPin(event) {
  event.preventDefault();
  const form = event.target;
  if (await join({ pin: form.elements.pin.value.trim() }, `${form.id}-error`)) form.reset();
}

// Join with the invite's token (or a PIN a link was made with by hand), and take it out of the address at once:
// out of the history and of screenshots.
function joinFromLink() {
  const [, kind, value] = /^#(join|pin)=([\w-]+)$/.exec(location.hash) ?? [];
  if (!value) return readRole();
  history.replaceState(null, "", location.pathname + location.search);
  const proof = kind === "join" ? { token: value } : { pin: value };
  return join(proof, "join-error").then((joined) => joined || readRole());
}

// A call whose answer goes to `done`, and whose refusal to `tell` (a toast unless a form has its own box).
export async function act(method, path, payload, done, tell = toast) {
  try {
    done(await request(method, path, payload));
  } catch (error) {
    tell(refusal(error));
  }
}

// Random digits from the browser's CSPRNG (n % 10 favours 0–5 by one in 700 million: no matter).
function madeUpPin(digits) {
  return Array.from(crypto.getRandomValues(new Uint32Array(digits)), (n) => n % 10).join("");
}

// A new table PIN comes back with its join link and QR code, to print or show.
async function changePins(event) {
  event.preventDefault();
  const pins = {};
  for (const which of ["table", "admin"]) {
    const pin = $(`pin-${which}`).value.trim();
    if (pin) pins[which] = pin;
  }
  showError("pins-error", "");
  const showQr = (body) => {
    toast(t("admin.saved"));
    if (!body.join_qr) return;
    $("join-qr").src = body.join_qr;
    $("join-url").textContent = body.join_url;
    $("join-card").hidden = false;
  };
  await act("PUT", "/api/pins", pins, showQr, (text) => showError("pins-error", text));
}

function describePinsChanged({ type, data }) {
  if (type !== "pins.changed") return null;
  if (data.changed.length > 1) return ["🔑", t("feed.pins_table_admin")];
  return ["🔑", data.changed[0] === "table" ? t("feed.pins_table") : t("feed.pins_admin")];
}

// Refused for want of a session: this phone never joined, or its PIN was changed since.
function onRefused(code) {
  if (code === "admin_required") return readRole().catch(() => {});
  access.role = "none";
  renderAccess();
  showError("join-error", t("refused.join_required"));
  $("join-pin").focus();
}

function startAccess() {
  for (const form of [$("join"), $("admin-join")]) form.addEventListener("submit", submitPin);
  $("pins").addEventListener("submit", changePins);
  for (const button of document.querySelectorAll("[data-pin]")) {
    const which = button.dataset.pin;
    button.addEventListener("click", () => ($(`pin-${which}`).value = madeUpPin(MADE_UP_DIGITS[which])));
  }
  $("leave").addEventListener("click", () =>
    act("DELETE", "/api/session", undefined, (body) => {
      access.role = body.role;
      renderAccess();
    }),
  );
  const reset = () =>
    act("POST", "/api/reset", undefined, (body) => {
      ui.fault = body.fault;
      renderFault();
    });
  $("fault-reset").addEventListener("click", reset);
  $("trouble-reset").addEventListener("click", reset);
  $("role").addEventListener("click", () => {
    $("access").open = true;
    $("access").scrollIntoView({ block: "start" });
  });
  return joinFromLink().catch(() => {});
}

// The admin's page asks again what to see to while the table plays, at most every NOTICES_MS and at the latest
// NOTICES_MS after an event: a disk that fills up or turns read-only mid-game is told within seconds of a press,
// and its notice goes once writes go through.
function readNoticesSoon() {
  if (access.role !== "admin" || access.noticesDue) return;
  const wait = Math.max(0, access.noticesRead + NOTICES_MS - Date.now());
  access.noticesDue = setTimeout(() => {
    access.noticesDue = null;
    access.noticesRead = Date.now();
    readRole().catch(() => {});
  }, wait);
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  render: renderAccess,
  refused: onRefused,
  // Another phone changed a PIN: this one may have been signed out (its own answer only comes on its next action).
  event: (event, fresh) => {
    if (fresh && event.type === "pins.changed") readRole().catch(() => {});
    else if (fresh) readNoticesSoon();
  },
  describe: describePinsChanged,
  start: startAccess,
};
