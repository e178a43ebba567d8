"""`uno-launcher`: the command line.

Every mistake on the command line or in the config ends with one line on stderr naming what was wrong and exit
code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import io
import logging
import sys
from pathlib import Path

import qrcode

from launcher import __version__
from launcher.config import Config, ConfigError, load

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"uno-launcher: {message} (see uno-launcher --help)\n")


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
    return parser


def _port(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None


def _effective_config(args: argparse.Namespace) -> Config:
    config = load(args.config)
    if args.sim:
        config = config.replace("hardware", backend="sim")
    web = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    return config.replace("web", **web) if web else config


def qr_text(url: str) -> str:
    qr = qrcode.QRCode(border=1)
    qr.add_data(url)
    out = io.StringIO()
    qr.print_ascii(out=out, invert=True)
    return out.getvalue()


def _run(args: argparse.Namespace) -> int:
    from launcher.daemon import Daemon, StartupError

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
    print(f"Open {daemon.urls[0]} on a phone" + (f" (or {', '.join(daemon.urls[1:])})" if daemon.urls[1:] else ""))
    print(qr_text(daemon.urls[-1]), end="", flush=True)
    daemon.serve()
    print("Stopped; motor off.")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
    except ConfigError as e:
        print(f"uno-launcher: config: {e}", file=sys.stderr)
        return EXIT_USAGE
    raise AssertionError(f"unhandled command {args.command}")
