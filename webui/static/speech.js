// Spoken call-outs of who must press ("Ben: press 2 times"), with the browser's own voices, where it has one for the
// page's language. One device speaks: the table screen when there is one, and a phone only where someone asks it to
// (sound.js), so that three phones do not say each line at once in three languages.
import { demandText } from "./gamestate.js";

// The voices that speak each language of the page, by their language tag's start.
const VOICE_LANGS = {
  en: ["en"],
  "zh-Hans": ["zh-cn", "zh-sg", "cmn-hans"],
  "zh-Hant": ["zh-tw", "zh-hk", "cmn-hant"],
};

let said = null; // the demand last called out

function voice() {
  const wanted = VOICE_LANGS[document.documentElement.lang] ?? VOICE_LANGS.en;
  const voices = window.speechSynthesis?.getVoices() ?? [];
  return voices.find((v) => wanted.some((tag) => v.lang.replace("_", "-").toLowerCase().startsWith(tag))) ?? null;
}

// Where the device has no voice for the page's language, nothing is said (an English voice reading Chinese would
// only spell it out). The places to break a Chinese line (webui/linebreak.py) are not read out.
export function say(text) {
  const speaker = voice();
  if (!speaker) return;
  const utterance = new SpeechSynthesisUtterance(text.replace(/[\u200b\u2060]/g, ""));
  utterance.voice = speaker;
  utterance.lang = speaker.lang;
  speechSynthesis.cancel(); // the newest call-out, not a queue of old ones
  speechSynthesis.speak(utterance);
}

// The table's demand, said once when it opens and as it changes; `speaking`: this device says it.
export function callOut(table, speaking) {
  const text = table?.pending ? demandText(table.pending) : null;
  if (text === said) return;
  said = text;
  if (text && speaking) say(text);
}
