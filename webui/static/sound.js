// Sound on the phone itself, made with Web Audio (no sound files): a ding for every press taken, ticks that quicken
// with the tension after a miss and through a suspense pause, a burst when cards fly, a sting for a jackpot. Spoken
// call-outs of who must press (speech.js), where this phone is asked to speak them. And the
// screen kept on while a game is in play, where the browser allows it (a wake lock needs https or this machine
// itself: over plain http://<launcher>:8080 phones have none, and the page says how to keep the screen on).
// The mute switch (sound on by default) and the call-outs switch (off by default) are remembered by the phone.
import { $, t, stored, remember } from "./core.js";
import { game } from "./gamestate.js";
import { callOut, say } from "./speech.js";

const MUTE_KEY = "uno-launcher.sound"; // "off": this phone is muted
// "on": this phone speaks the call-outs. Off by default: the table screen speaks them (speech.js).
const SPEECH_KEY = "uno-launcher.speech";
const CATCH_UP_MS = 1500; // after the stream (re)connects, what it replays is not sounded

const sound = {
  context: null, // the AudioContext, made on the first tap (browsers start audio only after a gesture)
  muted: false,
  speaking: false,
  ticks: null, // the gain node the ticks scheduled now play through: disconnected when the outcome comes
  connections: 0, // how often the stream connected
  quietUntil: 0, // performance.now() until which what a reconnected stream replays makes no sound
  primed: false, // something was said from a tap: iOS speaks only after that
  lock: null, // the screen's wake lock held now
  locking: false, // a wake lock is being asked for
};

// ---- Making sounds ----

function unlock() {
  if (!sound.context) {
    const Context = window.AudioContext ?? window.webkitAudioContext;
    if (!Context) return;
    sound.context = new Context();
  }
  // iOS also suspends it when the page was in the background: the next tap starts it again.
  if (sound.context.state !== "running") sound.context.resume().catch(() => {});
  primeSpeech();
}

// One tone through `out`: `type` wave at `hz` (sliding to `slide`), `at` seconds from now, fading over `length`.
function tone(out, { type = "sine", hz, slide = hz, at = 0, length, volume }) {
  const c = sound.context;
  const start = c.currentTime + at;
  const oscillator = c.createOscillator();
  oscillator.type = type;
  oscillator.frequency.setValueAtTime(hz, start);
  oscillator.frequency.exponentialRampToValueAtTime(slide, start + length);
  oscillator.connect(envelope(out, start, length, volume));
  oscillator.start(start);
  oscillator.stop(start + length + 0.05);
}

// White noise through a band that sweeps from `hz` down to `slide`: the whoosh of cards flying.
function noise(out, { hz, slide, length, volume }) {
  const c = sound.context;
  const start = c.currentTime;
  const buffer = c.createBuffer(1, Math.ceil(c.sampleRate * length), c.sampleRate);
  const samples = buffer.getChannelData(0);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.random() * 2 - 1;
  const source = c.createBufferSource();
  source.buffer = buffer;
  const band = c.createBiquadFilter();
  band.type = "bandpass";
  band.frequency.setValueAtTime(hz, start);
  band.frequency.exponentialRampToValueAtTime(slide, start + length);
  source.connect(band).connect(envelope(out, start, length, volume));
  source.start(start);
}

// Up in 5 ms, then fading out: no click at either end.
function envelope(out, start, length, volume) {
  const gain = sound.context.createGain();
  gain.gain.setValueAtTime(0.0001, start);
  gain.gain.exponentialRampToValueAtTime(volume, start + 0.005);
  gain.gain.exponentialRampToValueAtTime(0.0001, start + length);
  gain.connect(out);
  return gain;
}

function ding() {
  const out = sound.context.destination;
  tone(out, { hz: 1318.5, length: 0.4, volume: 0.3 }); // E6, with its octave for the bell
  tone(out, { hz: 2637, length: 0.25, volume: 0.08 });
}

// Ticks at the given gaps (seconds), higher as the tension (0..1) rises; stopped when the outcome comes.
function ticks(gaps, tension) {
  stopTicks();
  sound.ticks = sound.context.createGain();
  sound.ticks.connect(sound.context.destination);
  let at = 0.15; // after the ding
  for (const gap of gaps) {
    tone(sound.ticks, { type: "square", hz: 700 + 700 * tension, at, length: 0.03, volume: 0.12 });
    at += gap;
  }
}

function stopTicks() {
  sound.ticks?.disconnect();
  sound.ticks = null;
}

// After a miss: three ticks, quicker the nearer the next fire.
function missTicks(tension) {
  const gap = 0.34 - 0.24 * tension;
  ticks([gap, gap, gap], tension);
}

// Through a suspense pause: ticks quickening from a calm beat to a rattle until the pause ends.
function suspenseTicks(pauseMs) {
  const gaps = [];
  for (let at = 0, gap = 0.35; at < pauseMs / 1000; at += gap, gap = Math.max(0.06, gap * 0.85)) gaps.push(gap);
  ticks(gaps, 1);
}

// While the launcher works on a press: a quick roll of ticks until the press's end stops or replaces it (a fire
// runs a few seconds at most: the roll ends by itself after ROLL_S).
const ROLL_S = 6;
const ROLL_GAP_S = 0.07;
function drumRoll() {
  ticks(Array.from({ length: Math.round(ROLL_S / ROLL_GAP_S) }, () => ROLL_GAP_S), 0);
}

function burst() {
  const out = sound.context.destination;
  noise(out, { hz: 3000, slide: 400, length: 0.45, volume: 0.5 });
  tone(out, { type: "sawtooth", hz: 180, slide: 50, length: 0.3, volume: 0.25 }); // the thump
}

// A jackpot: a rising fanfare over the burst.
function sting() {
  burst();
  [523.25, 659.25, 783.99, 1046.5].forEach((hz, i) => {
    tone(sound.context.destination, { type: "triangle", hz, at: 0.1 + i * 0.11, length: 0.5, volume: 0.22 });
  });
}

function play(make) {
  if (sound.muted || !sound.context || performance.now() < sound.quietUntil) return;
  make();
}

function onEvent({ type, data }, fresh) {
  if (!fresh) return; // the history replayed when the page opens
  switch (type) {
    case "button.pressed":
      play(() => {
        ding();
        drumRoll();
      });
      break;
    case "launcher.suspense":
      play(() => suspenseTicks(data.pause_ms));
      break;
    case "launcher.missed":
      play(() => missTicks(data.tension));
      break;
    case "launcher.fired":
      stopTicks();
      play(data.jackpot ? sting : burst);
      break;
    case "launcher.dealt": // classic UNO: the exact cards dealt
      if (data.dispensed > 0) play(burst);
      break;
    case "launcher.jammed":
    case "launcher.empty":
    case "launcher.stopped":
    case "hardware.fault":
      stopTicks();
      break;
    case "attack.started":
    case "attack.progress":
      callOut(data.table, sound.speaking);
      break;
  }
}

// ---- Call-outs ----

// Safari on iOS speaks for a page only once it has said something from a tap: nothing, then, on the first tap
// with call-outs on.
function primeSpeech() {
  if (!sound.speaking || sound.primed) return;
  sound.primed = true;
  say("");
}

// ---- The screen kept on ----

// While a game is in play and the page is shown. The browser ends a lock when the page is hidden, so it is asked
// for again when the page is shown.
async function keepAwake() {
  const wanted = Boolean(game.data && !game.data.scoreboard.over) && document.visibilityState === "visible";
  if (!navigator.wakeLock || sound.locking || wanted === Boolean(sound.lock)) return;
  if (!wanted) {
    const lock = sound.lock;
    sound.lock = null;
    lock.release().catch(() => {});
    return;
  }
  sound.locking = true;
  try {
    const lock = await navigator.wakeLock.request("screen");
    lock.addEventListener("release", () => sound.lock === lock && (sound.lock = null));
    sound.lock = lock;
  } catch {
    return; // refused (battery saver, say): the phone sleeps as it is set to
  } finally {
    sound.locking = false;
  }
  keepAwake(); // the game may have ended while the lock was asked for
}

// ---- Switches ----

function renderSwitches() {
  const button = $("sound");
  button.setAttribute("aria-pressed", String(!sound.muted));
  button.setAttribute("aria-label", t("sound.switch"));
  $("sound-symbol").textContent = sound.muted ? "🔇" : "🔊";
  $("speech").checked = sound.speaking;
  $("awake-hint").hidden = Boolean(navigator.wakeLock);
}

function start() {
  sound.muted = stored(MUTE_KEY) === "off";
  sound.speaking = stored(SPEECH_KEY) === "on"; // off until someone asks this phone to speak
  // A tap anywhere lets the page make sound: capturing, so it is ready before the tap's own action plays one.
  for (const gesture of ["click", "keydown"]) document.addEventListener(gesture, unlock, { capture: true });
  $("sound").addEventListener("click", () => {
    sound.muted = !sound.muted;
    remember(MUTE_KEY, sound.muted ? "off" : null);
    if (sound.muted) stopTicks();
    renderSwitches();
  });
  $("speech").addEventListener("change", (e) => {
    sound.speaking = e.target.checked;
    remember(SPEECH_KEY, sound.speaking ? "on" : null);
    if (sound.speaking) primeSpeech();
    else window.speechSynthesis?.cancel();
  });
  document.addEventListener("visibilitychange", keepAwake);
  renderSwitches();
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  start,
  render: renderSwitches,
  event: onEvent,
  connected: ({ joined }) => {
    // The first stream replays only what is not fresh; a reconnected one may catch up on many fresh events (not
    // one opened again because the phone joined: it lost nothing, and the player's first press must sound).
    if (sound.connections++ && !joined) sound.quietUntil = performance.now() + CATCH_UP_MS;
  },
  seated: keepAwake,
};
