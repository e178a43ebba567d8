// Safety nets: an action that loses what the table has (the hopper's count, the shuffle in play, what a player
// owes) asks first, in a dialog of the page's own (window.confirm cannot be worded or styled, and some phones
// block it). `confirmed(question)` resolves true only when "Yes" is tapped: a stray tap, Escape or "No" does nothing.
import { $ } from "./core.js";

let answer = null; // the pending question's resolve, while the dialog is open

export function confirmed(question) {
  answer?.(false); // a question still open is answered no: only one is asked at a time
  $("confirm-question").replaceChildren(question); // words from the catalogues, put in by the caller
  $("confirm-dialog").showModal();
  return new Promise((resolve) => {
    answer = resolve;
  });
}

function close(yes) {
  const resolve = answer;
  answer = null;
  if ($("confirm-dialog").open) $("confirm-dialog").close();
  resolve?.(yes);
}

export const plug = {
  start() {
    $("confirm-yes").addEventListener("click", () => close(true));
    $("confirm-no").addEventListener("click", () => close(false));
    $("confirm-dialog").addEventListener("close", () => close(false)); // Escape
  },
};
