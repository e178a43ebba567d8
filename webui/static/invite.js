// The invite: any joined phone shows the QR code and the link that join the table (the table PIN inside), large
// enough to scan across the table. The launcher draws the code (GET /api/invite); the page's policy allows data:
// images, so it is shown as an <img>, never as inline markup.
import { request, refusal } from "./api.js";
import { copyText } from "./app.js";
import { $, t, ui } from "./core.js";
import { showError } from "./gamestate.js";

async function openInvite() {
  showError("invite-error", "");
  $("invite-qr").hidden = true;
  $("invite-link").textContent = "";
  $("invite-copy").disabled = true;
  $("invite-dialog").showModal();
  try {
    const invite = await request("GET", "/api/invite");
    $("invite-qr").src = invite.join_qr;
    $("invite-qr").hidden = false;
    $("invite-link").textContent = invite.join_url;
    $("invite-copy").disabled = false;
  } catch (error) {
    showError("invite-error", refusal(error));
  }
}

function renderInvite() {
  $("invite").hidden = !ui.joined;
  $("invite-qr").alt = t("invite.qr");
  if (!ui.joined && $("invite-dialog").open) $("invite-dialog").close(); // signed out: not this phone's to show
}

export const plug = {
  start() {
    $("invite").addEventListener("click", openInvite);
    $("invite-close").addEventListener("click", () => $("invite-dialog").close());
    $("invite-copy").addEventListener("click", () => copyText($("invite-link"), t("invite.copied")));
  },
  render: renderInvite,
  seated: renderInvite,
};
