"""`uno-launcher`: the command line.

Every mistake on the command line or in the config, and a store that cannot be used, ends with one line on stderr
naming what was wrong and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launcher import __version__
from launcher.schedule import PROFILES

# Each command imports what it uses when it runs, the config's and the store's code included: `--help` and a quick
# command start in a fraction of the time (gpiozero, the QR code maker and the web layer are the heavy ones; the
# config's dataclasses are next), which on a Pi Zero is seconds.
if TYPE_CHECKING:
    from launcher.config import Config
    from launcher.hardware.header_link import HeaderHardware

EXIT_USAGE = 2
MAX_PRESSES = 100_000_000  # for `simulate`: about a minute on a laptop


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="uno-launcher", description="Controller for a home-built UNO Attack card launcher.")
    parser.add_argument("--version", action="version", version=f"uno-launcher {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    run = commands.add_parser("run", help="run the daemon: launcher, schedule and the page for phones")
    run.add_argument("--config", type=Path, help="TOML config file (default: every default, simulated hardware)")
    run.add_argument("--sim", action="store_true", help="use simulated hardware, whatever the config says")
    run.add_argument("--host", help="address to listen on (0.0.0.0: every interface, for phones on the Wi-Fi)")
    run.add_argument("--port", type=_port, help="port to listen on (0: any free port)")
    run.add_argument("--verbose", action="store_true", help="log more")

    pins = commands.add_parser("pins", help="print the wiring table of the config: part, GPIO, header pin")
    pins.add_argument("--config", type=Path, help="TOML config file (default: every default)")

    selftest = commands.add_parser("selftest", help="check every part of the launcher, one pass/fail line each")
    calibrate = commands.add_parser("calibrate", help="find the motor duty that shoots single cards reliably")
    for command in (selftest, calibrate):
        command.add_argument("--config", type=Path, help="TOML config file (calibrate writes its results there)")
        command.add_argument("--sim", action="store_true", help="use simulated hardware, whatever the config says")

    simulate = commands.add_parser("simulate", help="figures of a firing profile over many simulated presses")
    simulate.add_argument("--profile", required=True, choices=list(PROFILES), help="a built-in profile")
    simulate.add_argument("--presses", required=True, type=_presses, help="how many presses to simulate")
    simulate.add_argument("--seed", help="seed text, to repeat a run (default: a fresh random seed, printed)")
    simulate.add_argument("--json", action="store_true", help="print the figures as JSON instead of text")
    simulate.add_argument("--svg", type=Path, metavar="FILE", help="also write the two histograms as an SVG chart")

    new_pins = commands.add_parser("new-pins", help="set or make up new table and admin PINs (when forgotten)")
    new_pins.add_argument("--config", type=Path, help="the daemon's config file, to find its store")
    new_pins.add_argument("--only", choices=("table", "admin"), help="change only this PIN")
    new_pins.add_argument("--table", metavar="DIGITS", help="the new table PIN (default: made up, 6 digits)")
    new_pins.add_argument("--admin", metavar="DIGITS", help="the new admin PIN (default: made up, 6 digits)")
    new_pins.add_argument(
        "--new-store", action="store_true", help="no store yet: make one, to set the PINs before the first start"
    )

    backup_ = commands.add_parser("backup", help="copy the store (games, shuffles, PINs) to a file; safe while it runs")
    backup_.add_argument("file", nargs="?", type=Path, help="the backup file to write (it must not exist yet)")
    backup_.add_argument("--into", type=Path, metavar="DIR", help="write it into DIR, named by the date and time")
    backup_.add_argument("--keep", type=int, default=7, metavar="N", help="with --into: keep the newest N (default 7)")
    backup_.add_argument("--config", type=Path, help="the daemon's config file, to find its store")

    restore_ = commands.add_parser("restore", help="make a backup the store again (the daemon must be stopped)")
    restore_.add_argument("file", type=Path, help="a backup written by `uno-launcher backup`")
    restore_.add_argument("--config", type=Path, help="the daemon's config file, to find its store")
    restore_.add_argument(
        "--keep-pins", action="store_true", help="take the backup's PINs too (default: the PINs set now stay)"
    )

    export = commands.add_parser("export", help="the games, one or all, as CSV or JSON (docs/HISTORY.md)")
    export.add_argument("--config", type=Path, help="the daemon's config file, to find its store")
    export.add_argument("--game", type=int, metavar="N", help="only game N (default: every game)")
    export.add_argument("--format", choices=("csv", "json"), default="csv", help="csv (default) or json")
    export.add_argument("--output", type=Path, metavar="FILE", help="write to FILE (default: standard output)")

    verify = commands.add_parser("verify", help="check a shuffle's outcomes against its revealed seed")
    source = verify.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "record", nargs="?", type=Path, help="a shuffle record (JSON, as the page downloads it, or its QR code's text)"
    )
    source.add_argument("--shuffle", type=int, metavar="N", help="shuffle N from the daemon's store")
    source.add_argument(
        "--checker",
        action="store_true",
        help="print the SHA-256 of the standalone checker (uno-checker.html) and where it is; --out FILE writes it",
    )
    verify.add_argument("--out", type=Path, metavar="FILE", help="with --checker: write the checker to FILE")
    verify.add_argument("--config", type=Path, help="the daemon's config file, to find its store (with --shuffle)")
    verify.add_argument(
        "--commitment", metavar="HEX", help="the commitment you saw before the first press: the record must have it"
    )
    verify.add_argument(
        "--contribution",
        metavar="HEX",
        action="append",
        default=[],
        help="a contribution you added (your phone's): the record must list it; may be given more than once",
    )
    return parser


def _port(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None


def _presses(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_PRESSES:
        raise argparse.ArgumentTypeError(f"{text!r} is not accepted: expected a whole number from 1 to {MAX_PRESSES:,}")
    return value


def _simulate(args: argparse.Namespace) -> int:
    from launcher import simulate

    return simulate.run(args)


def _effective_config(args: argparse.Namespace) -> Config:
    from launcher.config import load

    config = load(args.config)
    if getattr(args, "sim", False):
        config = config.replace("hardware", backend="sim")
    web = {k: v for k in ("host", "port") if (v := getattr(args, k, None)) is not None}
    return config.replace("web", **web) if web else config


def _run(args: argparse.Namespace) -> int:
    from launcher.daemon import Daemon, StartupError
    from launcher.netinfo import loopback_only
    from launcher.threads import StoppableThread

    config = _effective_config(args)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)  # long-lived streams are expected
    try:
        daemon = Daemon(config)
    except StartupError as e:
        print(f"uno-launcher: {e}", file=sys.stderr)
        return EXIT_USAGE
    hardware = "simulated hardware" if config.hardware.backend == "sim" else f"{config.hardware.backend} hardware"
    print(f"UNO launcher on {hardware}, state in {config.state_dir.resolve()}")
    local = loopback_only(config.web.host)
    print(_where_to_open(daemon.urls, local))
    new = daemon.new_pins
    table, admin = (new.table, new.admin) if new else (None, None)
    if new is not None and not sys.stdout.isatty():
        # Not a terminal someone watches (systemd's journal, nohup.out, a pipe): such output is kept and read by
        # more people than the owner, so the PINs go to a file only the owner and root can read, and it says where.
        where = _write_first_pins(config.state_dir, table, admin)
        print(f"The PINs made up on this first start are in {where} (only its owner and root may read it): cat {where}")
        table = admin = None  # nor the invite in the QR code below
    else:
        _print_pins(table, admin)
    # The QR code is drawn while the daemon already serves: importing the maker and drawing the code cost more than
    # the rest of the console's output (about a fifth of a second on a Pi Zero 2 W, benchmarks/bench_instructions.py),
    # and the phones need the page before anyone scans the picture.
    token = daemon.access.invite_token() if table is not None else None
    qr = StoppableThread(lambda: None if local else _print_qr(token, daemon.urls[-1]), "console-qr")
    qr.start()
    for sig in (signal.SIGTERM, signal.SIGINT):  # what serve() leaves once it is done: a late second signal (Ctrl-C
        signal.signal(sig, signal.SIG_IGN)  # twice) must not turn a finished shutdown's exit code 0 into a kill
    daemon.serve()
    qr.stop()
    print("Stopped; motor off.")
    return 0


def _where_to_open(urls: list[str], local: bool) -> str:
    """The console's line saying where the page is: on the Wi-Fi for phones, or on this machine alone, and then how
    to let phones in (a phone cannot open 127.0.0.1, which is the phone itself)."""
    if local:
        return (
            f"Open {urls[0]} in a browser on this machine. Phones cannot reach it there: to let them in, run with "
            "--host 0.0.0.0 (scripts/run-sim --host 0.0.0.0) and open the address it prints, or scan its QR code."
        )
    return f"Open {urls[0]} on a phone" + (f" (or {', '.join(urls[1:])})" if urls[1:] else "")


FIRST_PINS_FILE = "first-pins.txt"  # in the state directory, when the output is not a terminal


def _write_first_pins(state_dir: Path, table: str | None, admin: str | None) -> Path:
    """The first start's PINs in a file of mode 0600 (made so, never widened after), for `sudo cat`."""
    path = (state_dir / FIRST_PINS_FILE).resolve()
    path.unlink(missing_ok=True)  # a file left by an earlier first start: this one's PINs replace it
    lines = [f"Table PIN: {table}\n"] if table else []
    lines += [f"Admin PIN: {admin}\n"] if admin else []
    lines.append("Delete this file once noted; change them on the page under Admin, or: uno-launcher new-pins\n")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.writelines(lines)
    return path


def _print_pins(table: str | None, admin: str | None) -> None:
    """PINs just made, shown this once: the store keeps them only hashed (the invite joins with a token)."""
    if table is not None:
        print(f"Table PIN: {table}  (players join with it; the QR code below joins at once)")
    else:
        print("Players join with the table PIN (forgotten? run: uno-launcher new-pins)")
    if admin is not None:
        print(f"Admin PIN: {admin}  (for the launcher's settings: keep it to yourself)")
    if table is not None or admin is not None:
        print(
            "Shown only now (kept only hashed; any joined phone can show the table's invite, a link that joins without "
            "the PIN). Change them on the page under Admin, or: uno-launcher new-pins"
        )


def _print_qr(token: str | None, page_url: str) -> None:
    """A QR code of the page: one that joins with the invite's token when it is given."""
    from launcher.qr import join_url, qr_text

    print(qr_text(page_url if token is None else join_url(page_url, token)), end="", flush=True)


def _new_pins(args: argparse.Namespace) -> int:
    """Set or make up new PINs in the daemon's store; the phones they had joined must join again."""
    from launcher.access import AccessBook, PinError, Role, check_pin_shape, make_up_pin
    from launcher.netinfo import public_urls
    from launcher.store import STORE_FILE, Store

    config = _effective_config(args)
    wanted = {Role.TABLE: args.table, Role.ADMIN: args.admin}
    if args.only is not None:
        wanted = {role: pin for role, pin in wanted.items() if role.label == args.only}
    path = (config.state_dir / STORE_FILE).resolve()
    if not path.exists() and not args.new_store:
        print(
            f"uno-launcher new-pins: no store at {path}: run it with the daemon's --config (its state dir is relative "
            "to the folder the daemon runs in), or add --new-store to set the PINs before the first start",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        pins = {role: make_up_pin(role) if pin is None else check_pin_shape(role, pin) for role, pin in wanted.items()}
        book = AccessBook(Store(path))
        for role, pin in pins.items():
            book.set_pin(role, pin)
    except PinError as e:
        print(f"uno-launcher new-pins: {e}", file=sys.stderr)
        return EXIT_USAGE
    _print_pins(pins.get(Role.TABLE), pins.get(Role.ADMIN))
    _print_qr(book.invite_token() if Role.TABLE in pins else None, public_urls(config.web.host, config.web.port)[-1])
    print("A running daemon takes them at once and signs out the phones joined with the old ones.")
    return 0


def _verify(args: argparse.Namespace) -> int:
    """0: the shuffle checks out; 1: it does not; 2: no readable record."""
    from launcher import fairness
    from launcher.shuffles import ShuffleOpen

    if args.checker:
        return _checker(args.out)
    if args.out is not None:
        print("uno-launcher verify: --out goes with --checker", file=sys.stderr)
        return EXIT_USAGE
    seen = {"seen_commitment": args.commitment, "mine": args.contribution}
    try:
        if args.record is not None:
            report = fairness.verify_file(args.record, **seen)
        else:
            record = _stored_record(_effective_config(args), args.shuffle)
            report = fairness.verify(record, **seen)
    except (fairness.RecordError, ShuffleOpen) as e:
        print(f"uno-launcher verify: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(report)
    return 0 if report.ok else 1


def _checker(out: Path | None) -> int:
    """The standalone checker's SHA-256, built from this installation's sources, and where to get the file."""
    import hashlib

    from launcher import checker

    data = checker.build()
    print(f"{hashlib.sha256(data).hexdigest()}  uno-checker.html")
    print(f"The file: {checker.BUILT} in the project's repository (its README prints the same SHA-256).")
    if out is not None:
        out.write_bytes(data)
        print(f"Written to {out}.")
    return 0


def _stored_record(config: Config, number: int) -> dict[str, Any]:
    from launcher import fairness
    from launcher.shuffles import stored_record
    from launcher.store import STORE_FILE, Store, readable

    path = config.state_dir / STORE_FILE
    if not path.exists():
        raise fairness.RecordError(f"no store at {path}: pass the daemon's --config, or a record file")
    with readable(path) as usable, Store(usable).connect() as conn:  # a read-only card too
        record = stored_record(conn, number)
    if record is None:
        raise fairness.RecordError(f"there is no shuffle {number} in {path}")
    return record


def _export(args: argparse.Namespace) -> int:
    import time

    from launcher.export import NoSuchGame, export_chunks
    from launcher.history import History
    from launcher.store import STORE_FILE, Store, readable

    path = _effective_config(args).state_dir / STORE_FILE
    if not path.exists():
        print(f"uno-launcher export: no store at {path}: pass the daemon's --config", file=sys.stderr)
        return EXIT_USAGE
    with readable(path) as usable:  # a read-only card too
        history = History(Store(usable))
        history.catch_up()  # games kept before the history existed, if the daemon has not started since
        try:
            chunks = export_chunks(history, args.format, args.game, time.time())
            with contextlib.ExitStack() as files:
                out = sys.stdout.buffer if args.output is None else files.enter_context(args.output.open("wb"))
                for chunk in chunks:
                    out.write(chunk.encode("utf-8"))
        except (NoSuchGame, OSError) as e:
            print(f"uno-launcher export: {e}", file=sys.stderr)
            return EXIT_USAGE
    return 0


def _backup(args: argparse.Namespace) -> int:
    from launcher import backup
    from launcher.store import STORE_FILE

    if (args.file is None) == (args.into is None):
        print(
            "uno-launcher backup: give a FILE to write, or --into DIR (see uno-launcher backup --help)", file=sys.stderr
        )
        return EXIT_USAGE
    store = _effective_config(args).state_dir / STORE_FILE
    if args.into is None:
        made = backup.backup(store, args.file)
        removed: list[Path] = []
    else:
        made, removed = backup.backup_into(store, args.into, keep=args.keep)
    print(f"Backed up {store} to {made.path} ({made.size:,} bytes, schema {made.schema}).")
    for old in removed:
        print(f"Removed the old backup {old} (keeping the newest {args.keep}).")
    return 0


def _restore(args: argparse.Namespace) -> int:
    from launcher import backup
    from launcher.statelock import StateDirBusy
    from launcher.store import StoreError

    state_dir = _effective_config(args).state_dir
    try:
        restored, kept = backup.restore(args.file, state_dir, keep_pins=args.keep_pins)
    except StateDirBusy as e:
        print(f"uno-launcher restore: {e}", file=sys.stderr)
        return EXIT_USAGE
    except StoreError:
        raise  # its own words, printed by main()
    except Exception as e:  # a file handed over may make any check fail: one line, never a traceback
        print(f"uno-launcher restore: {args.file} was not restored ({type(e).__name__}: {e})", file=sys.stderr)
        return EXIT_USAGE
    print(f"Restored {args.file} as {restored.path} (schema {restored.schema}).")
    if kept is not None:
        print(f"The store it replaced is kept as {kept}.")
    pins = "the backup's PINs" if args.keep_pins or kept is None else "the PINs set before"
    print(f"Start the daemon again (sudo systemctl start uno-launcher); phones join again, with {pins}.")
    return 0


def _pins(args: argparse.Namespace) -> int:
    from launcher import workbench

    print(workbench.wiring_table(_effective_config(args).pins), end="")
    return 0


def _workbench_hardware(config: Config) -> HeaderHardware:
    """The GPIO hardware (real or simulated) for selftest and calibrate, or StartupError saying why not."""
    from launcher.daemon import StartupError, build_hardware
    from launcher.hardware.header_link import HeaderHardware

    if config.hardware.backend == "serial":
        raise StartupError("selftest and calibrate drive the GPIO header; the Pico board checks its own parts")
    try:
        hardware = build_hardware(config)
    except StartupError:
        raise
    except Exception as e:  # most often the pins are taken: the daemon is running
        raise StartupError(
            f"cannot open the launcher's pins: {e} (is the daemon running? sudo systemctl stop uno-launcher)"
        ) from None
    assert isinstance(hardware, HeaderHardware)
    return hardware


def _selftest(args: argparse.Namespace) -> int:
    from launcher import workbench
    from launcher.daemon import StartupError

    config = _effective_config(args)
    try:
        hardware = _workbench_hardware(config)
    except StartupError as e:
        print(f"uno-launcher selftest: {e}", file=sys.stderr)
        return EXIT_USAGE
    simulated = config.hardware.backend == "sim"
    assistant = workbench.SimulatedPerson(hardware) if simulated else workbench.Person(print)
    print(f"Self-test on {'simulated' if simulated else 'GPIO'} hardware:")
    try:
        checks = []
        for check in workbench.selftest(hardware, assistant):
            checks.append(check)
            print(check.line(), flush=True)
    finally:
        hardware.close()
    failed = [c.part for c in checks if not c.passed]
    print("All parts passed." if not failed else f"Failed: {', '.join(failed)}.")
    return 1 if failed else 0


def _calibrate(args: argparse.Namespace) -> int:
    from launcher import workbench
    from launcher.daemon import StartupError

    config = _effective_config(args)
    try:
        _workbench_hardware(config).close()  # fail early and clearly if the pins cannot be had
        found = workbench.calibrate(_workbench_hardware, config)
    except StartupError as e:
        print(f"uno-launcher calibrate: {e}", file=sys.stderr)
        return EXIT_USAGE
    print("duty  single cards  mean ms")
    for duty, singles, mean_ms in found.tried if found else []:
        print(f"{duty:>4.1f}  {singles:>12}  {mean_ms:>7}")
    if found is None:
        print("No duty shot single cards reliably: check the roller, the hopper and the exit beam.")
        return 1
    values = {"pwm": found.pwm, "jam_ms": found.jam_ms}
    print(f"Chosen: pwm = {found.pwm} ({found.ms_per_card} ms per card), jam_ms = {found.jam_ms}")
    if args.config is None:
        print("Add to the config's [dispense] section:\n" + "\n".join(f"{k} = {v}" for k, v in values.items()))
        return 0
    text = args.config.read_text(encoding="utf-8")
    args.config.write_text(workbench.set_toml_values(text, "dispense", values), encoding="utf-8")
    print(f"Written to {args.config}.")
    return 0


COMMANDS = {
    "run": _run,
    "pins": _pins,
    "selftest": _selftest,
    "calibrate": _calibrate,
    "simulate": _simulate,
    "verify": _verify,
    "export": _export,
    "new-pins": _new_pins,
    "backup": _backup,
    "restore": _restore,
}


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # --help and --version (0), or a usage error already printed (2)
        return int(e.code or 0)
    from launcher.config import ConfigError
    from launcher.store import StoreError

    try:
        return COMMANDS[args.command](args)
    except ConfigError as e:
        print(f"uno-launcher: config: {e}", file=sys.stderr)
        return EXIT_USAGE
    except StoreError as e:  # damaged, not ours, read-only or full: the message says which and what to do
        print(f"uno-launcher: {e}", file=sys.stderr)
        return EXIT_USAGE
