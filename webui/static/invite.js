// The invite: any joined phone shows the QR code and the link that join the table, large enough to scan across
// the table. The link carries the invite's token, never the PIN; the PIN's digits show under it only on a phone
// that typed them (or the admin's, after setting them), else a hint says whom to ask. The admin may make a new
// invite, which stops the old links. The launcher draws the code (GET /api/invite); the page's policy allows data:
// images, so it is shown as an <img>, never as inline markup. A phone waiting to join is let in from here by its code.
import { request, refusal } from "./api.js";
import { copyText } from "./app.js";
import { access } from "./access.js";
import { $, t, toast, ui } from "./core.js";
import { el, showError } from "./gamestate.js";

// "Table PIN: 258768" with the digits big, to be read out across the table, wherever the language puts them.
function pinLine(pin) {
  const [before, after = ""] = t("invite.pin").split("{pin}");
  return [before, el("strong", "invite-pin-digits", pin), after];
}

function showInvite(invite) {
  $("invite-qr").src = invite.join_qr;
  $("invite-qr").hidden = false;
  $("invite-link").textContent = invite.join_url;
  $("invite-copy").disabled = false;
  $("invite-pin").replaceChildren(...(invite.pin ? pinLine(invite.pin) : []));
  $("invite-pin").hidden = !invite.pin;
  $("invite-ask").hidden = Boolean(invite.pin);
}

async function loadInvite(method) {
  showError("invite-error", "");
  try {
    showInvite(await request(method, "/api/invite"));
    return true;
  } catch (error) {
    showError("invite-error", refusal(error));
    return false;
  }
}

function openInvite() {
  showError("let-in-said", "");
  showError("let-in-error", "");
  $("invite-qr").hidden = true;
  $("invite-link").textContent = "";
  $("invite-pin").hidden = true;
  $("invite-ask").hidden = true;
  $("invite-copy").disabled = true;
  $("invite-dialog").showModal();
  return loadInvite("GET");
}

async function renewInvite() {
  if (await loadInvite("POST")) toast(t("invite.renewed"));
}

// "Let a phone in": the code a waiting phone shows, typed here, has its PIN checked now (POST /api/let-in); this
// phone is told whether it was let in, the waiting phone joins (or is told its PIN was wrong) by itself.
async function letIn(event) {
  event.preventDefault();
  const code = $("let-in-code").value.trim().toUpperCase();
  showError("let-in-said", "");
  showError("let-in-error", "");
  try {
    const { role } = await request("POST", "/api/let-in", { code });
    showError("let-in-said", role === "none" ? t("invite.let_in_wrong") : t("invite.let_in_done"));
    $("let-in").reset();
  } catch (error) {
    showError("let-in-error", refusal(error));
  }
}

function renderInvite() {
  $("invite").hidden = !ui.joined;
  $("invite-new").hidden = access.role !== "admin";
  $("invite-qr").alt = t("invite.qr");
  if (!ui.joined && $("invite-dialog").open) $("invite-dialog").close(); // signed out: not this phone's to show
}

export const plug = {
  start() {
    $("invite").addEventListener("click", openInvite);
    $("invite-new").addEventListener("click", renewInvite);
    $("let-in").addEventListener("submit", letIn);
    $("invite-close").addEventListener("click", () => $("invite-dialog").close());
    $("invite-copy").addEventListener("click", () => copyText($("invite-link"), t("invite.copied")));
  },
  render: renderInvite,
  seated: renderInvite,
};
