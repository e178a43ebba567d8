// The one way the page calls the daemon's API: request(method, path, body) answers the parsed JSON, or throws an
// ApiError carrying the answer's status, code, message and other fields (tries_left, asked, …). A refusal for want
// of a session goes to hooks.refused too (access.js asks the phone to join). refusal(error) says it in the
// reader's language.
import { hooks, t, ui } from "./core.js";
import { causeName, demandText, kindName, modeName, names } from "./gamestate.js";

export class ApiError extends Error {
  // status 0: the daemon was not reached (`cause`: the browser's own error); body: the answer, {} if not JSON.
  constructor(status, body, cause) {
    const error = body.error ?? {};
    super(error.message ?? (status ? `HTTP ${status}` : String(cause?.message || cause)));
    this.name = "ApiError";
    this.status = status;
    this.body = body;
    this.cause = cause;
    Object.assign(this, error); // code, message and the daemon's other fields
  }
}

// The answer's body is {} when it is not JSON. `refused: false`: a refusal for want of a session is this caller's
// own business, not told to hooks.refused.
export async function request(method, path, payload, { refused = true } = {}) {
  const init = { method, headers: {} };
  if (payload !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(payload);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, {}, error);
  }
  const body = await response.json().catch(() => ({}));
  if (response.ok) return body;
  const code = body.error?.code;
  if (refused && (code === "join_required" || code === "admin_required")) for (const hook of hooks.refused) hook(code);
  throw new ApiError(response.status, body);
}

// The daemon's state, or null when it is older than events that reached the page while it was on its way: shown,
// it would take the page back (to a shuffle that has ended, say). The stream's ids only grow, across restarts too.
export async function readState() {
  const received = ui.received;
  const state = await request("GET", "/api/state");
  const older = ui.received > received && (state.last_event_id ?? 0) < ui.lastId;
  return older ? null : state;
}

// Refusals in the reader's language, by the daemon's `reason` (launcher/refusals.py) or else its `code`, with the
// daemon's names and numbers. Literal keys for tests/test_i18n.py.
const REFUSALS = {
  owes: (said) => t("refused.owes", { demand: demandText(said), card: causeName(said.card) }),
  went_out: (said) => t("refused.went_out", said),
  last_two: (said) => t("refused.last_two", said),
  no_game: () => t("refused.no_game"),
  game_over: () => t("refused.game_over"),
  no_round_to_undo: () => t("refused.no_round_to_undo"),
  winner_holds_cards: (said) => t("refused.winner_holds_cards", said),
  stack_not_hit: (said) => t("refused.stack_not_hit", said),
  stack_too_late: (said) => t("refused.stack_too_late", said),
  challenge_too_late: (said) => t("refused.challenge_too_late", said),
  uno_too_late: (said) => t("refused.uno_too_late", said),
  name_too_long: (said) => t("refused.name_too_long", said),
  out_of_range: (said) => t("refused.out_of_range", said),
  names_differ: (said) => t("refused.names_differ", said),
  player_count: (said) => (said.count === 1 ? t("refused.player_count_one", said) : t("refused.player_count", said)),
  fault: () => t("refused.fault"),
  lid_open: () => t("refused.lid_open"),
  busy: () => t("refused.busy"),
  undo_too_late: () => t("refused.undo_too_late"),
  nothing_to_undo: () => t("refused.nothing_to_undo"),
  not_your_press: () => t("refused.not_your_press"),
  over_deck: (said) => {
    const values = { count: said.count, card: kindName(said.card), max: said.max };
    if (!said.held?.length) return t("refused.over_deck_hand", values);
    const held = said.held.map(([player, count]) => `${player} ${count}`).join(t("list.sep"));
    return t("refused.over_deck", { ...values, held });
  },
  points_over_deck: () => t("refused.points_over_deck"),
  red_zero_not_held: (said) => t("refused.red_zero_not_held", said),
  hand_missing: (said) => t("refused.hand_missing", { players: names(said.players) }),
  eliminated: (said) => t("refused.eliminated", said),
  last_card_needed: (said) => t("refused.last_card_needed", said),
  no_finish_on: (said) => t("refused.no_finish_on", { player: said.player, card: kindName(said.card) }),
  first_card_back: (said) => t("refused.first_card_back", { card: kindName(said.card) }),
  first_card_late: () => t("refused.first_card_late"),
  nothing_to_challenge: (said) => t("refused.nothing_to_challenge", { ...said, card: kindName("wild_draw_four") }),
  challenge_closed: () => t("refused.challenge_closed", { card: kindName("wild_draw_four") }),
  stack_mismatch: (said) => t("refused.stack_mismatch", { card: causeName(said.card), onto: causeName(said.onto) }),
  elimination_needs_three: () =>
    t("refused.elimination_needs_three", { mode: modeName("elimination"), other: modeName("lowest_total") }),
  knock_out_teams: () => t("refused.knock_out_teams", { mode: modeName("knock_out") }),
  contributions_closed: (said) => t("refused.contributions_closed", said),
  contributions_full: (said) => t("refused.contributions_full", said),
  already_contributed: (said) => t("refused.already_contributed", said),
  reveal_early: (said) => t("refused.reveal_early", said),
  reveals_closed: (said) => t("refused.reveals_closed", said),
  reveal_mismatch: (said) => t("refused.reveal_mismatch", said),
  shuffle_sealing: () => t("refused.shuffle_sealing"),
  shuffle_over: (said) => t("refused.shuffle_over", said),
  shuffle_not_started: (said) => t("refused.shuffle_not_started", said),
  join_required: () => t("refused.join_required"),
  admin_required: () => t("refused.admin_required"),
  wrong_pin: (error) => (error.tries_left > 0 ? t("refused.wrong_pin", error) : t("refused.too_many_tries", error)),
  too_many_tries: (error) => t("refused.too_many_tries", error),
  bad_pin: () => t("refused.bad_pin"),
  invite_revoked: () => t("refused.invite_revoked"),
  bad_token: () => t("refused.invite_revoked"),
  wait_over: () => t("refused.wait_over"),
  too_many_games: (said) => t("refused.too_many_games", said),
  too_many_declarations: (said) => t("refused.too_many_declarations", said),
  too_many_joins: (said) => t("refused.too_many_joins", said),
  too_many_let_ins: (said) => t("refused.too_many_let_ins", said),
  no_such_code: () => t("refused.no_such_code"),
  bad_code: () => t("refused.bad_code"),
  pin_was_wrong: () => t("refused.pin_was_wrong"),
  too_many_shuffles: (said) => t("refused.too_many_shuffles", said),
  too_many_reloads: (said) => t("refused.too_many_reloads", said),
  too_many_presses: (said) => t("refused.too_many_presses", said),
  store_full: () => t("refused.store_full"),
  disk_full: () => t("refused.disk_full"),
  disk_read_only: () => t("refused.disk_read_only"),
  store_failed: () => t("refused.store_failed"),
  attacks_open: (said) => t("refused.attacks_open", { owed: said.player ? demandText(said) : said.owed }),
};

// What to tell of a failed call: offline when the daemon was not reached (or anything else went wrong); a refusal
// in the reader's language; otherwise the status, never the daemon's English message (what only a faulty client
// is told, or a page older than the daemon: tests/test_refusal_words.py).
export function refusal(error) {
  if (!(error instanceof ApiError) || error.status === 0) return t("toast.offline");
  const said = error.body.error;
  const words = REFUSALS[said?.reason] ?? REFUSALS[said?.code];
  return words?.(said) ?? t("game.failed", { status: error.status });
}
