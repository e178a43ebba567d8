"""QR codes of the page's address: as text for the console, as an SVG image for the admin's page.

A join link carries the invite's token (never the PIN) in the fragment (`#join=…`), which browsers never send to a
server: the page reads it, joins, and removes it from the address bar.
"""

from __future__ import annotations

import base64
import functools
import io

import qrcode
from qrcode.image.svg import SvgPathFillImage


def join_url(page_url: str, token: str) -> str:
    return f"{page_url.rstrip('/')}/#join={token}"


def qr_text(url: str) -> str:
    qr = qrcode.QRCode(border=1)
    qr.add_data(url)
    out = io.StringIO()
    qr.print_ascii(out=out, invert=True)
    return out.getvalue()


@functools.lru_cache(maxsize=8)  # about 10 ms of interpreter time each: drawn once per link, however often asked
def qr_svg_data_url(url: str) -> str:
    """An SVG QR code on white (readable in the dark theme too) as a data: URL, for an <img>: the page's policy
    allows data: images, never inline markup."""
    svg = qrcode.make(url, image_factory=SvgPathFillImage, border=2).to_string()
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
