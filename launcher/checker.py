"""The standalone checker: one HTML file that checks a shuffle record with no network and no launcher
(docs/FAIRNESS.md, "A checker the launcher did not serve").

It is built, byte for byte the same on every machine, from the page's own verifier (webui/static/fairverify.js: the
one source of the check in JavaScript), the checker's page (webui/checker/) and the BLS12-381 check of a drand
round (webui/checker/vendor/: @noble/curves, bundled once by scripts/vendor-noble and kept as it is, with its
licence). scripts/build-checker writes it to docs/checker/uno-checker.html; `uno-launcher verify --checker` prints
its SHA-256. Standard library only.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

WEBUI = Path(__file__).resolve().parent.parent / "webui"
BUILT = Path("docs") / "checker" / "uno-checker.html"  # where the project keeps it, from the repository's root
MAX_BYTES = 100_000  # small enough to keep on a phone and read through


def build() -> bytes:
    """The checker's bytes: the page with the verifier and the checker's script inlined, as they are (an inline
    module script may keep its `export`s: nobody imports them)."""
    page = (WEBUI / "checker" / "checker.html").read_text(encoding="utf-8")
    verifier = (WEBUI / "static" / "fairverify.js").read_text(encoding="utf-8")
    script = (WEBUI / "checker" / "checker.js").read_text(encoding="utf-8")
    vendor = WEBUI / "checker" / "vendor"  # @noble/curves' BLS12-381, bundled by scripts/vendor-noble, and its licence
    noble = (vendor / "noble-bls.b64").read_text(encoding="ascii").strip()
    licence = (vendor / "LICENSE-noble").read_text(encoding="utf-8")
    parts = (
        ("/*FAIRVERIFY*/", verifier),
        ("/*NOBLE_BLS*/", noble),
        ("/*CHECKER*/", script),
        ("/*NOBLE_LICENSE*/", licence),
    )
    for marker, text in parts:
        if page.count(marker) != 1:
            raise ValueError(f"webui/checker/checker.html must hold {marker} exactly once")
        page = page.replace(marker, text.rstrip("\n"))
    data = page.encode("utf-8")
    if len(data) > MAX_BYTES:
        raise ValueError(f"the checker is {len(data)} bytes, over {MAX_BYTES}")
    return data


def sha256() -> str:
    """The SHA-256 of the checker as built from these sources, as lowercase hex."""
    return hashlib.sha256(build()).hexdigest()
