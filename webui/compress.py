"""gzip for the page and its answers: a phone on a Pi's Wi-Fi loads the page in a quarter of the bytes.

Only whole answers of text types are compressed: never the event stream, whose events must each leave at once.
The page's own files keep their validators: the compressed copy has its own ETag, answered 304 when a phone
already has it, and is made once per file version.
"""

from __future__ import annotations

import gzip
import threading
from collections import OrderedDict

from flask import Flask, Request, Response, request

COMPRESSIBLE = frozenset(
    {
        "text/html",
        "text/css",
        "text/javascript",
        "application/javascript",
        "application/json",
        "application/manifest+json",
        "image/svg+xml",
    }
)
SMALLEST = 1024  # below this, the gzip header and a round of work are not worth it
FILES_KEPT = 64  # compressed page files kept, by ETag (the page has about a dozen)


class _Cache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: OrderedDict[str, bytes] = OrderedDict()

    def get(self, etag: str, data: bytes) -> bytes:
        with self._lock:
            found = self._files.get(etag)
        if found is None:
            found = gzip.compress(data, compresslevel=6, mtime=0)
            with self._lock:
                self._files[etag] = found
                while len(self._files) > FILES_KEPT:
                    self._files.popitem(last=False)
        return found


def gzip_etag(etag: str) -> str:
    """The ETag of a representation's gzip (a different representation: RFC 9110 says its own validator)."""
    return f"{etag}-gzip"


def _wanted(response: Response, asked: Request) -> bool:
    return (
        response.status_code == 200
        and response.mimetype in COMPRESSIBLE  # never text/event-stream: each event must leave at once
        and "Content-Encoding" not in response.headers
        and asked.accept_encodings.quality("gzip") > 0
    )


def install(app: Flask) -> None:
    cache = _Cache()

    @app.after_request
    def _compress(response: Response) -> Response:
        response.vary.add("Accept-Encoding")
        if not _wanted(response, request):
            return response
        response.direct_passthrough = False  # a page file is sent from disk; read it to compress it
        data = response.get_data()
        response.close()  # the file it was read from
        if len(data) < SMALLEST:
            return response
        etag, weak = response.get_etag()
        if etag:
            response.set_data(cache.get(etag, data))
            response.set_etag(gzip_etag(etag), weak=bool(weak))
        else:
            response.set_data(gzip.compress(data, compresslevel=6, mtime=0))
        response.headers["Content-Encoding"] = "gzip"
        response.headers.pop("Accept-Ranges", None)  # byte ranges would be of the file, not of what is sent
        response.make_conditional(request)
        return response
