// The new-game form (players and seats, teams, ruleset, house rules, scoring, firing profile) and the rules
// reference for the chosen ruleset and house rules. game.js imports it and calls its redraws; it shows a game
// through gamestate.js's `view`.
import { request, refusal } from "./api.js";
import { $, ui, t, profileName, profileAbout, PROFILE_NAMES } from "./core.js";
import {
  game,
  view,
  RULESET_TEXTS,
  choiceTexts,
  scoringOption,
  el,
  option,
  names,
  number,
  showError,
  confirmTap,
  kindName,
  rulesetName,
  tableParts,
} from "./gamestate.js";

const TEAM_LETTERS = "ABCDE";

export const setup = {
  seats: ["", "", ""],
  ruleset: "uno_attack",
  house: {}, // house rule key → on
  // The scoring options (the daemon's registry, rules.scoring): null until the rules come, then their defaults.
  mode: null,
  final: null, // elimination: with two left, play on to the last standing, or the next round decides
  target: null, // one of the target's presets, as text, or "other"
  teams: 0, // how many teams; 0: everyone for themselves
  dealer: 0, // seat index
  built: "", // the language the form's texts were made in
  rulesKey: "", // what the rules reference shows
  sending: false,
};

// ---- The form ----

// The target's one-tap values, as text.
function targetPresets() {
  return scoringOption("target").presets.map(String);
}

// Whether a scoring option (or a house rule) is a setting of the chosen mode.
function inMode(option) {
  return option.modes.includes(setup.mode);
}

function scoringDefaults() {
  setup.mode ??= scoringOption("mode").default;
  setup.final ??= scoringOption("final").default;
  setup.target ??= String(scoringOption("target").default);
}

function seatName(i) {
  return setup.seats[i].trim() || t("setup.player_n", { n: i + 1 });
}

// Team counts that fit: every team at least two players, partners on alternate seats (seat i joins team i mod k).
// Not in a mode without teams (knock-out play is for players only).
function teamChoices() {
  if (!inMode(scoringOption("teams"))) return [];
  const n = setup.seats.length;
  const counts = [];
  for (let k = 2; k <= n / 2; k++) if (n % k === 0) counts.push(k);
  return counts;
}

function teamName(k) {
  return t("setup.team_name", { letter: TEAM_LETTERS[k] });
}

function teamsOf() {
  if (!setup.teams) return null;
  const teams = {};
  for (let k = 0; k < setup.teams; k++) {
    teams[teamName(k)] = setup.seats.map((_, i) => i).filter((i) => i % setup.teams === k);
  }
  return teams;
}

function choice(type, name, value, checked, title, about, onChange) {
  const label = el("label", type === "checkbox" ? "check choice" : "choice");
  const input = el("input");
  input.type = type;
  input.name = name;
  input.value = value;
  input.checked = checked;
  input.addEventListener("change", () => onChange(input.checked));
  const text = el("span", "choice-text");
  text.append(el("span", "choice-title", title));
  if (about) text.append(el("span", "choice-about", about));
  label.append(input, text);
  return label;
}

function buildSetup() {
  if (!setup.built && game.data) {
    // The next game is most often the same table again: start from the current one's players and rules.
    setup.seats = [...game.data.players];
    setup.ruleset = game.data.ruleset;
    setup.house = { ...game.data.house_rules };
    setup.mode = game.data.mode;
    setup.final = game.data.final;
    setup.target = targetPresets().includes(String(game.data.target)) ? String(game.data.target) : "other";
    $("target-other").value = String(game.data.target);
  }
  scoringDefaults();
  // The house numbers' and the target's limits, from the daemon's rules; the current game's values to start from.
  for (const [id, key] of [
    ["party-penalty", "party_penalty"],
    ["forgot-uno", "forgot_uno_penalty"],
  ]) {
    const limits = game.rules.house_rule_numbers[key];
    $(id).min = String(limits.min);
    $(id).max = String(limits.max);
    if (!setup.built && game.data) $(id).value = String(game.data.house_rules[key] ?? limits.default);
  }
  const target = scoringOption("target").schema;
  $("target-other").min = String(target.minimum);
  $("target-other").max = String(target.maximum);
  setup.built = ui.lang;
  buildSeats();
  const rules = game.rules;
  $("ruleset-choices").replaceChildren(
    ...rules.rulesets.map((id) => {
      const [name, about] = RULESET_TEXTS[id]?.() ?? [id, ""];
      return choice("radio", "ruleset", id, setup.ruleset === id, name, about, () => {
        setup.ruleset = id;
        for (const start of rules.house_choices ?? []) delete setup.house[start.name]; // each ruleset's own way
        setup.seats.length = Math.min(setup.seats.length, mostSeats()); // UNO Attack seats 9, classic 10
        buildSeats();
        buildHouse();
        renderGameRules();
      });
    }),
  );
  buildHouse();
  $("mode-choices").replaceChildren(
    ...scoringChoices("mode", () => {
      $("final-row").hidden = !inMode(scoringOption("final"));
      buildHouse(); // some house rules score only some modes
      renderSeatsAround(); // knock-out play has no teams
    }),
  );
  $("final-row").hidden = !inMode(scoringOption("final"));
  $("final-choices").replaceChildren(...scoringChoices("final", () => {}));
  $("target-choices").replaceChildren(
    ...[...targetPresets(), "other"].map((value) => {
      const label = el("label", "chip");
      const input = el("input");
      input.type = "radio";
      input.name = "target";
      input.value = value;
      input.checked = setup.target === value;
      input.addEventListener("change", () => {
        setup.target = value;
        $("target-other-row").hidden = value !== "other";
        renderGameRules();
      });
      label.append(input, el("span", "", value === "other" ? t("setup.target_other_chip") : number(Number(value))));
      return label;
    }),
  );
  $("target-other-row").hidden = setup.target !== "other";
  const profiles = ui.profiles?.map((p) => p.name) ?? PROFILE_NAMES;
  const keep = $("setup-profile").value;
  $("setup-profile").replaceChildren(
    option("", t("setup.profile_keep")),
    ...profiles.map((name) => option(name, t("profile.option", { name: profileName(name), about: profileAbout(name) }))),
  );
  $("setup-profile").value = profiles.includes(keep) ? keep : "";
}

// A radio button for each value of a scoring choice ("mode", "final"), with the registry's words.
function scoringChoices(name, then) {
  return scoringOption(name).choices.map(({ value }) => {
    const [title, about] = choiceTexts(name, value);
    return choice("radio", name, value, setup[name] === value, title, about, () => {
      setup[name] = value;
      then();
      renderGameRules();
    });
  });
}

// The house rules that choose who starts (the daemon's rules.house_choices: the values, each ruleset's own), worded
// here by literal keys.
const START_TITLES = {
  first_player: () => t("start.first_player"),
  reverse_start: () => t("start.reverse_start"),
};
const START_TEXTS = {
  "first_player.left_of_dealer": () => [t("start.left_of_dealer"), t("start.left_of_dealer_about")],
  "first_player.dealer": () => [t("start.dealer"), t("start.dealer_about")],
  "reverse_start.dealer": () => [t("start.dealer"), t("start.reverse_dealer_about")],
  "reverse_start.right_of_dealer": () => [t("start.right_of_dealer"), t("start.reverse_right_about")],
};

// The value of a choice of who starts: the one picked, else the chosen ruleset's own.
function startValue(rule) {
  return setup.house[rule.name] ?? rule.defaults[setup.ruleset];
}

function startChoices() {
  return (game.rules?.house_choices ?? []).map((rule) => {
    const group = el("fieldset", "start-choice");
    group.append(el("legend", "", START_TITLES[rule.name]()));
    for (const value of rule.values) {
      const [title, about] = START_TEXTS[`${rule.name}.${value}`]();
      const picked = startValue(rule) === value;
      group.append(
        choice("radio", rule.name, value, picked, title, about, () => {
          setup.house[rule.name] = value;
          renderGameRules();
        }),
      );
    }
    return group;
  });
}

// The house rules that mean something in the chosen ruleset and mode.
function offeredHouseRules() {
  return (game.rules?.house_rules ?? []).filter((rule) => rule.rulesets.includes(setup.ruleset) && inMode(rule));
}

function buildHouse() {
  const texts = offeredHouseRules();
  $("house-choices").replaceChildren(
    ...startChoices(),
    ...texts.map((rule) =>
      choice(
        "checkbox",
        "house",
        rule.key,
        Boolean(setup.house[rule.key]),
        t(rule.words),
        t(rule.about),
        (on) => {
          setup.house[rule.key] = on;
          $("party-row").hidden = !houseRules().party_penalties;
          renderGameRules();
        },
      ),
    ),
  );
  $("party-row").hidden = !houseRules().party_penalties;
}

// The house rules as sent: only those that mean something in the chosen ruleset and mode.
function houseRules() {
  const rules = {};
  for (const rule of offeredHouseRules()) if (setup.house[rule.key]) rules[rule.key] = true;
  for (const rule of game.rules?.house_choices ?? []) rules[rule.name] = startValue(rule);
  if (rules.party_penalties) {
    rules.party_penalty = Number($("party-penalty").value) || game.rules.house_rule_numbers.party_penalty.default;
  }
  // A forgotten UNO costs what the table plays (the official rules: 2); the daemon names a number out of range.
  const forgot = Number($("forgot-uno").value);
  if (forgot) rules.forgot_uno_penalty = forgot;
  return rules;
}

export function buildSeats() {
  const count = setup.seats.length;
  $("seats").replaceChildren(
    ...setup.seats.map((name, i) => {
      const item = el("li", "seat");
      const input = el("input");
      input.type = "text";
      input.value = name;
      input.maxLength = 40;
      input.autocomplete = "off";
      input.setAttribute("aria-label", t("setup.player_n", { n: i + 1 }));
      input.placeholder = t("setup.player_n", { n: i + 1 });
      input.addEventListener("input", () => {
        setup.seats[i] = input.value;
        renderSeatsAround();
      });
      const button = (symbol, label, disabled, action) => {
        const node = el("button", "seat-button", symbol);
        node.type = "button";
        node.setAttribute("aria-label", label);
        node.disabled = disabled;
        node.addEventListener("click", action);
        return node;
      };
      const who = seatName(i);
      item.append(
        el("span", "seat-number", String(i + 1)),
        input,
        button("↑", t("setup.up", { player: who }), i === 0, () => moveSeat(i, -1)),
        button("↓", t("setup.down", { player: who }), i === count - 1, () => moveSeat(i, 1)),
        button("✕", t("setup.remove", { player: who }), count <= 2, () => removeSeat(i)),
      );
      return item;
    }),
  );
  $("seat-add").disabled = count >= mostSeats();
  renderSeatsAround();
}

function moveSeat(i, step) {
  const j = i + step;
  [setup.seats[i], setup.seats[j]] = [setup.seats[j], setup.seats[i]];
  if (setup.dealer === i) setup.dealer = j;
  else if (setup.dealer === j) setup.dealer = i;
  buildSeats();
  $("seats").children[j].querySelectorAll("button")[step < 0 ? 0 : 1].focus();
}

function removeSeat(i) {
  setup.seats.splice(i, 1);
  if (setup.dealer >= setup.seats.length || setup.dealer === i) setup.dealer = 0;
  buildSeats();
}

// As many players as the chosen ruleset seats (from the daemon's rules).
export function mostSeats() {
  return game.rules?.players?.[setup.ruleset]?.max ?? 10;
}

function addSeat() {
  if (setup.seats.length >= mostSeats()) return;
  setup.seats.push("");
  buildSeats();
  $("seats").lastElementChild.querySelector("input").focus();
}

// What depends on the names and the number of seats: the hint, teams, the dealer.
export function renderSeatsAround() {
  const count = setup.seats.length;
  $("seats-hint").textContent = count === 1 ? t("setup.seats_hint_one") : t("setup.seats_hint", { count });
  const choices = teamChoices();
  if (!choices.includes(setup.teams)) setup.teams = 0;
  $("teams").replaceChildren(
    option("0", t("setup.no_teams")),
    ...choices.map((k) => option(String(k), t("setup.teams_of", { teams: k, size: count / k }))),
  );
  $("teams").value = String(setup.teams);
  $("teams").disabled = choices.length === 0;
  const teams = teamsOf();
  $("teams-hint").hidden = !teams;
  $("team-preview").replaceChildren(
    ...Object.entries(teams ?? {}).map(([team, seats]) => {
      const item = el("li");
      item.append(el("strong", "", team), el("span", "", names(seats.map(seatName))));
      return item;
    }),
  );
  $("setup-dealer").replaceChildren(...setup.seats.map((_, i) => option(String(i), seatName(i))));
  $("setup-dealer").value = String(setup.dealer);
  for (const [i, item] of [...$("seats").children].entries()) {
    const who = seatName(i);
    const [up, down, remove] = item.querySelectorAll("button");
    up.setAttribute("aria-label", t("setup.up", { player: who }));
    down.setAttribute("aria-label", t("setup.down", { player: who }));
    remove.setAttribute("aria-label", t("setup.remove", { player: who }));
  }
}

export function renderSetup() {
  if (!game.rules) return;
  if (setup.built !== ui.lang) buildSetup();
  const button = $("setup-start");
  if (button.dataset.confirm !== "true") button.textContent = `▶ ${t("setup.start")}`;
  button.disabled = setup.sending;
  button.setAttribute("aria-busy", String(setup.sending));
}

function setupBody() {
  const players = setup.seats.map((name) => name.trim());
  const target = setup.target === "other" ? Number($("target-other").value) : Number(setup.target);
  const teams = teamsOf();
  const body = {
    players,
    ruleset: setup.ruleset,
    house_rules: houseRules(),
    mode: setup.mode,
    target,
    teams: teams && Object.fromEntries(Object.entries(teams).map(([team, at]) => [team, at.map((i) => players[i])])),
    dealer: players[setup.dealer],
    track_turns: $("track-turns").checked,
  };
  if (inMode(scoringOption("final"))) body.final = setup.final;
  if ($("setup-profile").value) body.profile = $("setup-profile").value;
  return body;
}

function submitSetup(e) {
  e.preventDefault();
  const blank = setup.seats.findIndex((name) => !name.trim());
  if (blank >= 0) {
    showError("setup-error", t("setup.name_missing", { n: blank + 1 }));
    $("seats").children[blank].querySelector("input").focus();
    return;
  }
  showError("setup-error", "");
  if (game.data && !game.data.scoreboard.over) {
    confirmTap($("setup-start"), `▶ ${t("setup.confirm")}`, startNewGame);
  } else {
    startNewGame();
  }
}

async function startNewGame() {
  if (setup.sending) return;
  setup.sending = true;
  renderSetup();
  try {
    const body = await request("POST", "/api/games", setupBody());
    game.tab = "table";
    view.show(body.game);
    // What comes next: "Who are you?" (welcome.js) when this phone's player is not known, else the prompt at the top.
    if ($("welcome").hidden) window.scrollTo({ top: 0 });
    else {
      $("welcome").scrollIntoView({ block: "start" });
      $("welcome-players").querySelector("button")?.focus({ preventScroll: true });
    }
  } catch (error) {
    showError("setup-error", refusal(error));
  } finally {
    setup.sending = false;
    renderSetup();
  }
}

// ---- The rules reference ----

// Each row: the card or situation, and what the launcher does. Literal keys for tests/test_i18n.py.
const EFFECTS = {
  uno_attack: () => [
    [t("effect.no_play"), t("effect.attack_no_play")],
    [kindName("hit_2"), t("effect.hit_2")],
    [kindName("wild_all_hit"), t("effect.wild_all_hit")],
    [kindName("wild_hit_fire"), t("effect.wild_hit_fire")],
    [kindName("skip"), t("effect.skip")],
    [kindName("reverse"), t("effect.reverse")],
    [kindName("discard_all"), t("effect.discard_all")],
    [kindName("trade_hands"), t("effect.trade_hands")],
    [kindName("wild"), t("effect.wild")],
    [t("effect.forgot_uno"), t("effect.attack_forgot_uno")],
    [t("effect.suggestion"), t("effect.attack_suggestion")],
    [t("effect.shot"), t("effect.attack_shot")],
    [t("effect.penalties"), t("effect.attack_penalties")],
    [t("effect.two_players"), t("effect.attack_two_players")],
  ],
  classic: () => [
    [t("effect.deal"), t("effect.classic_deal")],
    [t("effect.no_play"), t("effect.classic_no_play")],
    [kindName("draw_two"), t("effect.draw_two")],
    [kindName("wild_draw_four"), t("effect.wild_draw_four")],
    [t("effect.challenge"), t("effect.classic_challenge")],
    [kindName("skip"), t("effect.skip")],
    [kindName("reverse"), t("effect.reverse")],
    [kindName("wild"), t("effect.wild")],
    [t("effect.forgot_uno"), t("effect.classic_two")],
    [t("effect.false_uno"), t("effect.classic_two")],
    [t("effect.wrong_card"), t("effect.classic_two")],
    [t("effect.wrong_accusation"), t("effect.classic_accusation")],
  ],
};

// The first card's rows for the house rules played: whoever plays first takes a first Skip, Hit 2 or Draw Two.
function firstCardRows(house, attacks, back) {
  const dealer = house.first_player === "dealer";
  return [
    ...attacks(dealer),
    [kindName("skip"), dealer ? t("first.skip_dealer") : t("first.skip")],
    [kindName("reverse"), house.reverse_start === "right_of_dealer" ? t("first.reverse_right") : t("first.reverse")],
    [kindName(back), t("first.back")],
    [t("first.other"), dealer ? t("first.other_dealer") : t("first.other_left")],
  ];
}

const FIRST_CARD = {
  uno_attack: (house) =>
    firstCardRows(
      house,
      (dealer) => [
        [kindName("wild_hit_fire"), dealer ? t("first.wild_hit_fire_dealer") : t("first.wild_hit_fire")],
        [kindName("wild_all_hit"), t("first.wild_all_hit")],
        [kindName("hit_2"), dealer ? t("first.hit_2_dealer") : t("first.hit_2")],
      ],
      "trade_hands",
    ),
  classic: (house) =>
    firstCardRows(
      house,
      (dealer) => [
        [kindName("draw_two"), dealer || house.first_draw_two_dealer ? t("first.draw_two_dealer") : t("first.draw_two")],
      ],
      "wild_draw_four",
    ),
};

function rulesTable(rows, cardHead, effectHead) {
  const table = el("table", "grid-table");
  table.append(...tableParts([cardHead, effectHead], rows));
  return table;
}

// For the game in play, else for what the new-game form has chosen.
export function renderGameRules() {
  if (!game.rules) return;
  scoringDefaults();
  const data = game.data;
  const ruleset = data?.ruleset ?? setup.ruleset;
  const house = data?.house_rules ?? houseRules();
  const mode = data?.mode ?? setup.mode;
  const final = data ? data.final : inMode(scoringOption("final")) ? setup.final : null;
  const chosen = setup.target === "other" ? Number($("target-other").value) || 0 : Number(setup.target);
  const target = data?.target ?? chosen;
  const key = JSON.stringify([ui.lang, ruleset, house, mode, final, target, Boolean(data)]);
  if (key === setup.rulesKey) return;
  setup.rulesKey = key;
  $("grules-which").textContent = data
    ? t("grules.which_game", { ruleset: rulesetName(ruleset) })
    : t("grules.which_setup", { ruleset: rulesetName(ruleset) });
  const effects = rulesTable(EFFECTS[ruleset]?.() ?? [], t("grules.card"), t("grules.launcher"));
  effects.id = "effects";
  effects.classList.add("effects");
  const first = rulesTable(FIRST_CARD[ruleset]?.(house) ?? [], t("grules.first_card"), t("grules.launcher"));
  first.id = "grules-first";
  $("effects").replaceWith(effects);
  $("grules-first")?.remove();
  effects.after(first);
  const on = game.rules.house_rules.filter((rule) => rule.rulesets.includes(ruleset) && house[rule.key]);
  $("grules-house").replaceChildren(
    ...(on.length
      ? on.map((rule) => {
          const item = el("li");
          item.append(
            el("strong", "", `✓ ${t(rule.words)}`),
            el("span", "", t(rule.about)),
          );
          return item;
        })
      : [el("li", "", t("grules.official"))]),
  );
  const [modeTitle, modeAbout] = choiceTexts("mode", mode);
  const values = { mode: modeTitle, about: modeAbout, target: number(target) };
  const finalAbout = final && choiceTexts("final", final)[1];
  $("grules-mode").textContent = t("grules.mode", values) + (finalAbout ? ` ${finalAbout}` : "");
  const deck = game.rules.decks[ruleset];
  const head = el("tr");
  for (const [text, cls] of [
    [t("grules.card"), ""],
    [t("grules.count"), "num"],
    [t("grules.points"), "num"],
  ]) {
    const cell = el("th", cls, text);
    cell.scope = "col";
    head.append(cell);
  }
  const thead = el("thead");
  thead.append(head);
  const body = el("tbody");
  const row = (card, count, points) => {
    const line = el("tr");
    const name = el("th", "", card);
    name.scope = "row";
    line.append(name, el("td", "num", count), el("td", "num", points));
    body.append(line);
  };
  // The numbers 1 to 9 on one line: as many of each, worth their face value.
  const numbers = deck.kinds.filter((kind) => /^[1-9]$/.test(kind.id));
  for (const kind of deck.kinds) {
    if (kind === numbers[0]) {
      row("1 – 9", t("grules.each", { count: number(kind.count) }), t("grules.face"));
    } else if (!numbers.includes(kind)) {
      const points = kind.id === "0" && house.red_zero_100 ? t("grules.red_zero") : number(kind.points);
      row(kindName(kind.id), number(kind.count), points);
    }
  }
  const caption = el("caption", "", t("grules.deck_total", { cards: number(deck.total) }));
  $("grules-deck").replaceChildren(caption, thead, body);
}

// ---- Start ----

function startSetup() {
  $("setup").addEventListener("submit", submitSetup);
  $("seat-add").addEventListener("click", addSeat);
  $("teams").addEventListener("change", (e) => {
    setup.teams = Number(e.target.value);
    renderSeatsAround();
  });
  $("setup-dealer").addEventListener("change", (e) => (setup.dealer = Number(e.target.value)));
  $("target-other").addEventListener("input", () => renderGameRules());
  $("party-penalty").addEventListener("input", () => renderGameRules());
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = { start: startSetup };
