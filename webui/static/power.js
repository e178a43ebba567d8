// The Pi's power warnings and its switching off, as a banner on every phone while they last. The daemon reads the
// firmware's under-voltage and throttling flags (launcher/system/power.py): /api/state holds the current ones, and
// power.changed follows them; daemon.powering_off says the big button was held and the Pi is switching off.
import { $, t } from "./core.js";

const power = {
  warnings: [], // the firmware's current flags: under_voltage, frequency_capped, throttled, soft_temperature_limit
  off: false, // the Pi is switching off
};

// Capped and throttled come together and mean the same to the table: one line for both.
const POWER_LINES = {
  under_voltage: () => t("power.under_voltage"),
  frequency_capped: () => t("power.slowed"),
  throttled: () => t("power.slowed"),
  soft_temperature_limit: () => t("power.hot"),
};

function renderPower() {
  const lines = power.off ? [t("power.off")] : [...new Set(power.warnings.map((w) => POWER_LINES[w]?.()))];
  const shown = lines.filter(Boolean);
  $("power").hidden = shown.length === 0;
  $("power-text").textContent = shown.join(" ");
}

// What this module adds to the page's hooks (core.js; main.js adds them).
export const plug = {
  state: (state) => {
    power.warnings = state.power?.warnings ?? [];
    power.off = false; // a daemon that answers is not switching off (any more)
    renderPower();
  },
  event: ({ type, data }, fresh) => {
    if (!fresh) return; // older than the state read: already in it
    if (type === "power.changed") power.warnings = data.warnings;
    else if (type === "daemon.powering_off") power.off = true;
    else return;
    renderPower();
  },
  render: renderPower,
};
