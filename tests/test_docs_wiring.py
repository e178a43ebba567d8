"""docs/HARDWARE.md and the two wiring diagrams agree with the pins the code uses.

The Pi diagram and the pin table must show every default of `launcher.config.PinsConfig` (as GPIO<n>, on the right
physical header pin); the Pico diagram every pin of `firmware/board.py` (as GP<n>). Both SVGs must be self-contained:
GitHub shows them through an <img>, which loads nothing from outside the file anyway, and the launcher has no internet.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from launcher.config import PinsConfig

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
HARDWARE = DOCS / "HARDWARE.md"
PI_SVG = DOCS / "wiring-pi.svg"
PICO_SVG = DOCS / "wiring-pico.svg"
SVG_NS = "{http://www.w3.org/2000/svg}"

# BCM number → physical pin on the 40-pin header (the same on every Pi with 40 pins, the Pi 5 included).
PHYSICAL = {
    2: 3, 3: 5, 4: 7, 17: 11, 27: 13, 22: 15, 10: 19, 9: 21, 11: 23, 0: 27, 5: 29, 6: 31, 13: 33, 19: 35, 26: 37,
    14: 8, 15: 10, 18: 12, 23: 16, 24: 18, 25: 22, 8: 24, 7: 26, 1: 28, 12: 32, 16: 36, 20: 38, 21: 40,
}  # fmt: skip

# Pico GP number → physical pin (pins 3, 8, 13, 18, 23, 28, 33, 38 are GND; 36 is 3V3 out).
PICO_PHYSICAL = {
    0: 1, 1: 2, 2: 4, 3: 5, 4: 6, 5: 7, 6: 9, 7: 10, 8: 11, 9: 12, 10: 14, 11: 15, 12: 16, 13: 17, 14: 19, 15: 20,
    16: 21, 17: 22, 18: 24, 19: 25, 20: 26, 21: 27, 22: 29, 26: 31, 27: 32, 28: 34,
}  # fmt: skip


def _pin_defaults() -> dict[str, int]:
    return {f.name: f.default for f in dataclasses.fields(PinsConfig)}


def _board_pins() -> dict[str, int | str | None]:
    """The pin constants of firmware/board.py (everything but the timing and frequency limits), read without import."""
    tree = ast.parse((ROOT / "firmware" / "board.py").read_text())
    pins: dict[str, int | str | None] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name.isupper() and not name.endswith(("_MS", "_FREQ")):
                pins[name] = ast.literal_eval(node.value)
    return pins


def _texts(root: ET.Element) -> list[str]:
    return ["".join(el.itertext()).strip() for el in root.iter(f"{SVG_NS}text")]


def _pin_table() -> list[dict[str, str]]:
    """The rows of HARDWARE.md's pin table: the markdown table whose header has a "BCM" column."""
    lines = HARDWARE.read_text().splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and "BCM" in cells:
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(dict(zip(cells, (c.strip() for c in row.strip().strip("|").split("|")), strict=True)))
            return rows
    raise AssertionError("docs/HARDWARE.md has no pin table (a markdown table with a BCM column)")


@pytest.mark.parametrize("path", [PI_SVG, PICO_SVG], ids=lambda p: p.name)
def test_svg_is_self_contained_xml_with_a_viewbox(path: Path) -> None:
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG_NS}svg"
    assert re.fullmatch(r"0 0 \d+ \d+", root.get("viewBox", "")), "a viewBox, so it scales to the page width"
    assert root.find(f"{SVG_NS}title") is not None, "a <title>: the diagram's text alternative"
    assert not list(root.iter(f"{SVG_NS}image")), "no <image>: every part is drawn"
    for el in root.iter():
        for attr, value in el.attrib.items():
            if attr.endswith("href"):
                assert value.startswith("#"), f"<{el.tag}> {attr}={value!r}: only references inside the file"
    text = path.read_text()
    without_namespaces = re.sub(r'xmlns(:\w+)?="[^"]*"', "", text)
    assert "http" not in without_namespaces, "no web address"
    assert "@font-face" not in text and "@import" not in text, "no web fonts or stylesheets"
    assert not re.search(r"url\(\s*['\"]?(?!#)", text), "url() only for references inside the file"


def test_every_configured_pin_is_in_the_pi_diagram_on_its_header_pin() -> None:
    root = ET.parse(PI_SVG).getroot()
    groups = {el.get("id"): el for el in root.iter(f"{SVG_NS}g") if el.get("id")}
    for key, bcm in _pin_defaults().items():
        group = groups.get(f"pin-{PHYSICAL[bcm]}")
        assert group is not None, f"{key}: physical pin {PHYSICAL[bcm]} (GPIO{bcm}) is not drawn on the header"
        texts = _texts(group)
        assert f"GPIO{bcm}" in texts, f"{key}: header pin {PHYSICAL[bcm]} is labelled {texts}, not GPIO{bcm}"
        assert str(PHYSICAL[bcm]) in texts


def test_the_pin_table_matches_the_config_defaults() -> None:
    rows = _pin_table()
    by_bcm = {row["BCM"]: row for row in rows if row["BCM"]}
    defaults = _pin_defaults()
    for key, bcm in defaults.items():
        row = by_bcm.get(f"GPIO{bcm}")
        assert row is not None, f"pins.{key} = {bcm}: no row for GPIO{bcm} in the pin table"
        assert f"`{key}`" in row["config key"], f"the GPIO{bcm} row should name the config key `{key}`"
        assert row["physical pin"] == str(PHYSICAL[bcm]), f"GPIO{bcm} is physical pin {PHYSICAL[bcm]}"
    # And no row names a config key with a pin other than its default.
    for row in rows:
        for key in re.findall(r"`(\w+)`", row["config key"]):
            assert key in defaults, f"the pin table names `{key}`, which [pins] does not have"
            assert row["BCM"] == f"GPIO{defaults[key]}", f"`{key}` defaults to GPIO{defaults[key]}, not {row['BCM']}"
    bcms = [row["BCM"] for row in rows if row["BCM"]]
    assert len(bcms) == len(set(bcms)), "one row per pin"


def test_every_firmware_pin_is_in_the_pico_diagram_on_its_physical_pin() -> None:
    root = ET.parse(PICO_SVG).getroot()
    groups = {el.get("id"): el for el in root.iter(f"{SVG_NS}g") if el.get("id")}
    words = {word for text in _texts(root) for word in re.split(r"[\s():,]+", text)}
    pins = _board_pins()
    assert {"BUTTON", "BEAM", "MOTOR_IN1", "MOTOR_IN2"} <= pins.keys()
    for name, pin in pins.items():
        if pin is None:
            continue  # not fitted
        if isinstance(pin, str):  # a named pin, like the on-board "LED"
            assert pin in words, f"board.{name} = {pin!r} is not in {PICO_SVG.name}"
            continue
        group = groups.get(f"pin-{PICO_PHYSICAL[pin]}")
        assert group is not None, f"board.{name}: physical pin {PICO_PHYSICAL[pin]} (GP{pin}) is not drawn"
        texts = _texts(group)
        assert f"GP{pin}" in texts, f"board.{name}: Pico pin {PICO_PHYSICAL[pin]} is labelled {texts}, not GP{pin}"


def test_hardware_md_embeds_both_diagrams() -> None:
    text = HARDWARE.read_text()
    for svg in (PI_SVG, PICO_SVG):
        assert f"]({svg.name})" in text, f"HARDWARE.md should show {svg.name}"
