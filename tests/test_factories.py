"""The pin factory and the gpiochip it opens, on fake sysfs trees of a Pi 4, a Pi 5 before and after kernel 6.6.45,
and machines without the header's chip."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from launcher.hardware import factories
from launcher.hardware.factories import NoPinFactory, pin_factory
from launcher.hardware.gpiochip import Chip, NoHeaderChip, chips, header_chip


@dataclass(frozen=True)
class FakeChip:
    parent: str  # the chip's device under /sys/devices/platform
    number: int  # N of /dev/gpiochipN
    base: int  # its first global GPIO number, which names it in /sys/class/gpio
    label: str
    lines: int


# From gpiodetect and `ls -l /sys/class/gpio` on Raspberry Pi OS Bookworm; the bases are as the kernel hands them out.
PI4 = [
    FakeChip("soc/fe200000.gpio", 0, 512, "pinctrl-bcm2711", 58),
    FakeChip("soc/soc:firmware/soc:firmware:gpio", 1, 570, "raspberrypi-exp-gpio", 8),
]
RP1 = "axi/1000120000.pcie/1f000d0000.gpio"
BRCMSTB = [  # two controllers of two banks each: sysfs does not say which bank is which gpiochipN
    ("soc/107d508500.gpio", 512, "gpio-brcmstb@107d508500", 32),
    ("soc/107d508500.gpio", 544, "gpio-brcmstb@107d508520", 4),
    ("soc/107d517c00.gpio", 548, "gpio-brcmstb@107d517c00", 17),
    ("soc/107d517c00.gpio", 565, "gpio-brcmstb@107d517c20", 6),
]
PI5_OLD_KERNEL = [FakeChip(p, n, b, label, lines) for n, (p, b, label, lines) in enumerate(BRCMSTB)] + [
    FakeChip(RP1, 4, 571, "pinctrl-rp1", 54)
]
PI5_NEW_KERNEL = [FakeChip(RP1, 0, 571, "pinctrl-rp1", 54)] + [
    FakeChip(p, n, b, label, lines) for n, (p, b, label, lines) in enumerate(BRCMSTB, start=10)
]
USB_ADAPTER = [FakeChip("pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0", 0, 512, "ftdi-cbus", 4)]


def sysfs(root: Path, fakes: list[FakeChip]) -> Path:
    """The kernel's layout: the chip's device and its legacy entry side by side under the parent device, and
    /sys/class/gpio/gpiochipBASE a link to the legacy entry."""
    for chip in fakes:
        parent = root / "sys/devices/platform" / chip.parent
        (parent / f"gpiochip{chip.number}").mkdir(parents=True, exist_ok=True)
        entry = parent / "gpio" / f"gpiochip{chip.base}"
        entry.mkdir(parents=True)
        (entry / "label").write_text(chip.label + "\n")
        (entry / "ngpio").write_text(f"{chip.lines}\n")
        (entry / "base").write_text(f"{chip.base}\n")
        (entry / "device").symlink_to("../..")
        link = root / "sys/class/gpio" / f"gpiochip{chip.base}"
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(Path("../../devices/platform", chip.parent, "gpio", entry.name))
    return root


@pytest.mark.parametrize(
    ("fakes", "header"),
    [
        (PI4, Chip(0, "pinctrl-bcm2711", 58)),
        (PI5_OLD_KERNEL, Chip(4, "pinctrl-rp1", 54)),
        (PI5_NEW_KERNEL, Chip(0, "pinctrl-rp1", 54)),
    ],
    ids=["pi4", "pi5-old-kernel", "pi5-new-kernel"],
)
def test_the_header_chip_is_found_by_its_label(tmp_path: Path, fakes: list[FakeChip], header: Chip) -> None:
    assert header_chip(chips(sysfs(tmp_path, fakes))) == header


def test_the_chips_as_read_from_sysfs(tmp_path: Path) -> None:
    assert [str(c) for c in chips(sysfs(tmp_path, PI5_OLD_KERNEL))] == [
        "gpiochip4 [pinctrl-rp1] (54 lines)",
        "gpiochip? [gpio-brcmstb@107d508500] (32 lines)",
        "gpiochip? [gpio-brcmstb@107d508520] (4 lines)",
        "gpiochip? [gpio-brcmstb@107d517c00] (17 lines)",
        "gpiochip? [gpio-brcmstb@107d517c20] (6 lines)",
    ]
    assert chips(sysfs(tmp_path / "pi4", PI4)) == [
        Chip(0, "pinctrl-bcm2711", 58),
        Chip(1, "raspberrypi-exp-gpio", 8),
    ]


def test_no_header_chip_says_what_there_is(tmp_path: Path) -> None:
    with pytest.raises(NoHeaderChip, match=r"no gpiochip of the 40-pin header.*: none listed in /sys/class/gpio$"):
        header_chip(chips(tmp_path))
    with pytest.raises(NoHeaderChip, match=r"pinctrl-rp1 .*: gpiochip0 \[ftdi-cbus\] \(4 lines\)$"):
        header_chip(chips(sysfs(tmp_path, USB_ADAPTER)))


def test_a_label_with_the_wrong_line_count_is_not_the_header() -> None:
    with pytest.raises(NoHeaderChip):
        header_chip([Chip(0, "pinctrl-rp1", 58), Chip(1, "pinctrl-bcm2711", 54)])


def test_two_header_like_chips_are_not_guessed_between() -> None:
    with pytest.raises(NoHeaderChip, match="more than one gpiochip looks like the 40-pin header"):
        header_chip([Chip(0, "pinctrl-bcm2835", 54), Chip(4, "pinctrl-rp1", 54)])


class FakeLGPIOFactory:
    """Stands in for gpiozero's LGPIOFactory, and records the chip it is given. The real one opens /dev/gpiochipN
    through lgpio at once, and no machine running these tests has a gpiochip (nor lgpio installed); what is tested
    is which chip the launcher asks for."""

    def __init__(self, chip: int | None = None) -> None:
        self.chip = chip


class FakeRPiGPIOFactory:
    """Stands in for gpiozero's RPiGPIOFactory, which takes no chip: RPi.GPIO maps the header's registers itself."""


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two pin libraries gpiozero knows as entry points, as fakes of the library classes."""
    group = "gpiozero_pin_factories"
    fakes = [
        EntryPoint("lgpio", f"{__name__}:FakeLGPIOFactory", group),
        EntryPoint("rpigpio", f"{__name__}:FakeRPiGPIOFactory", group),
    ]
    monkeypatch.setattr(factories, "entry_points", lambda group: fakes)
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.delenv(factories.CHIP_OVERRIDE, raising=False)


@pytest.mark.usefixtures("installed")
@pytest.mark.parametrize(
    ("fakes", "number"),
    [(PI4, 0), (PI5_OLD_KERNEL, 4), (PI5_NEW_KERNEL, 0)],
    ids=["pi4", "pi5-old-kernel", "pi5-new-kernel"],
)
def test_lgpio_is_given_the_header_chip(tmp_path: Path, fakes: list[FakeChip], number: int) -> None:
    # with the gpiozero installed here, whose version obeys chip=
    factory = pin_factory(root=sysfs(tmp_path, fakes))
    assert isinstance(factory, FakeLGPIOFactory)
    assert factory.chip == number


@pytest.mark.usefixtures("installed")
@pytest.mark.parametrize("old", ["2.0", "2.0.1"])
def test_a_gpiozero_that_ignores_chip_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str) -> None:
    monkeypatch.setattr(factories, "version", lambda name: old)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "lgpio")  # else RPi.GPIO's fake would stand in
    with pytest.raises(NoPinFactory) as e:
        pin_factory(root=sysfs(tmp_path, PI5_NEW_KERNEL))
    message = str(e.value)
    assert f"lgpio: gpiozero {old} cannot be told to use gpiochip0 [pinctrl-rp1] (54 lines)" in message
    assert "pip install 'gpiozero>=2.0.1.post3'" in message and "\n" not in message


@pytest.mark.usefixtures("installed")
def test_without_the_header_chip_rpigpio_is_next(tmp_path: Path) -> None:
    assert isinstance(pin_factory(root=sysfs(tmp_path, USB_ADAPTER)), FakeRPiGPIOFactory)


@pytest.mark.usefixtures("installed")
def test_nothing_matches_one_line_naming_the_chips_and_the_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "lgpio")
    with pytest.raises(NoPinFactory) as e:
        pin_factory(root=sysfs(tmp_path, USB_ADAPTER))
    assert str(e.value) == (
        "no GPIO pin library works on this machine (lgpio: no gpiochip of the 40-pin header, which is pinctrl-rp1"
        " (54 lines), pinctrl-bcm2711 (58) or pinctrl-bcm2835 (54 or 58); this machine's chips: gpiochip0"
        " [ftdi-cbus] (4 lines); to name the header's chip yourself, set GPIOZERO_LGPIO_CHIP to its number)."
        " On a laptop, run on simulated hardware with --sim; on a Pi, install the extra: pip install '.[pi]'"
    )


@pytest.mark.usefixtures("installed")
def test_the_override_names_the_chip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(factories.CHIP_OVERRIDE, "4")
    factory = pin_factory(root=sysfs(tmp_path, PI5_NEW_KERNEL))  # overrides the label too
    assert isinstance(factory, FakeLGPIOFactory) and factory.chip == 4
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "lgpio")
    monkeypatch.setenv(factories.CHIP_OVERRIDE, "gpiochip0")
    with pytest.raises(NoPinFactory, match=r"lgpio: GPIOZERO_LGPIO_CHIP must be a gpiochip number such as 0, not"):
        pin_factory(root=tmp_path)
