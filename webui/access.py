"""Who may call what: every request that changes something is checked here before its view runs.

Reading is open. A state-changing request must come from the page's own origin, and needs a session joined with
the table PIN unless its view says otherwise with `needs()`: the default denies, so a new route cannot be left
open by forgetting a decorator.

Every view that writes declares what it spends, once, beside `needs()`: `budgeted(Budget.X)` (the gate checks the
store's size and spends one of this phone's X before the view runs; the API's description shows it as `x-budget`),
or `unbudgeted(why)` for a write that grows the store by nothing or by a bound of its own.
tests/test_budgets.py walks /api/openapi.json and fails for a write that declares neither.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit

from flask import Flask, Response, current_app, g, request

from launcher.access.book import AccessBook, Role, session_digest
from launcher.access.budgets import Budget, Budgets, OverBudget, PerMinute
from launcher.access.channel import party
from launcher.refusals import Refusal
from webui.errors import ApiError
from webui.parts import parts

COOKIE = "uno_session"
COOKIE_MAX_AGE_S = 400 * 24 * 3600  # the longest browsers keep a cookie; the session's idle limit ends it sooner
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

View = TypeVar("View", bound=Callable[..., object])


def needs(role: Role) -> Callable[[View], View]:
    """Mark the role a view needs, instead of the default (TABLE for a change, NONE for a read)."""

    def mark(view: View) -> View:
        view.role_needed = role  # type: ignore[attr-defined]
        return view

    return mark


def budgeted(budget: Budget) -> Callable[[View], View]:
    """Declare that a view grows the store: before it runs, the gate spends one of this phone's `budget` (and,
    if the budget says so, refuses once the store is full), whatever the view then answers."""

    def mark(view: View) -> View:
        view.budget = budget  # type: ignore[attr-defined]
        return view

    return mark


def unbudgeted(why: str) -> Callable[[View], View]:
    """Declare a write that spends no budget at the gate, and why the store cannot grow by it unbounded."""

    def mark(view: View) -> View:
        view.unbudgeted = why  # type: ignore[attr-defined]
        return view

    return mark


def book() -> AccessBook:
    return parts().access


def session_token() -> str | None:
    return request.cookies.get(COOKIE)


def caller_role() -> Role:
    role: Role = g.role
    return role


def budgets() -> Budgets:
    return parts().budgets


def spend(budget: PerMinute, *, grows_store: bool = True) -> None:
    """Count one action of this phone (its session and its address) against `budget`, after checking that the
    store may still grow; a clear refusal otherwise (launcher/access/budgets.py)."""
    try:
        if grows_store:
            budgets().check_store()
        token = session_token()
        keys = [f"a:{client()}"] + ([f"s:{session_digest(token)}"] if token else [])
        budget.take(*keys)
    except OverBudget as e:
        if e.what is Refusal.STORE_FULL:
            raise ApiError(409, e.what.value, str(e)) from None
        raise ApiError(429, e.what.value, str(e), retry_after_s=e.retry_after_s) from None


def client() -> str:
    """Whom PIN guesses, streams and sessions are counted against: the phone's party (the daemon is not behind a
    proxy), as its connections are (launcher/access/connections.py)."""
    return party(request.remote_addr or "unknown")


def set_session_cookie(response: Response, token: str) -> None:
    response.set_cookie(COOKIE, token, max_age=COOKIE_MAX_AGE_S, path="/", httponly=True, samesite="Strict")


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="Strict")


def _check_origin() -> None:
    """A browser names the page a request comes from; refuse another site's (CSRF), even with a cookie."""
    if request.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
        raise ApiError(403, "bad_origin", "refused: this request came from another site")
    origin = request.headers.get("Origin")
    if origin is None:
        return  # not sent by a browser's page (curl, scripts): they carry no ambient cookie of a victim
    parts = urlsplit(origin)
    if (parts.scheme, parts.netloc) != (request.scheme, request.host):
        raise ApiError(403, "bad_origin", f"refused: this request came from another site ({origin:.80})")


def _check_host() -> None:
    """Answer only to the names the launcher has: a page on another site whose name was made to point here (DNS
    rebinding) sends its own name as the Host, which is refused. An address typed in cannot be rebound."""
    name = (urlsplit(f"//{request.host}").hostname or "").rstrip(".")  # lower case, without port or brackets
    try:
        ipaddress.ip_address(name)
        return
    except ValueError:
        pass
    if name not in parts().served_names:
        raise ApiError(
            421, "bad_host", f"this launcher does not answer to the name {name[:80]!r}; open it by its address"
        )


def served_names(public_urls: list[str]) -> frozenset[str]:
    """The host names the page may be opened by: localhost, this machine's name (and .local), and those of its
    public addresses."""
    host = socket.gethostname().lower()
    names = {"localhost", host, f"{host}.local"}
    names.update((urlsplit(url).hostname or "").lower() for url in public_urls)
    return frozenset(n for n in names if n)


def _gate() -> None:
    _check_host()
    g.role = book().role_of(session_token())
    view = current_app.view_functions.get(request.endpoint or "")
    if view is None:
        return  # no such route: answered 404 or 405 as usual
    unsafe = request.method not in SAFE_METHODS
    if unsafe:
        _check_origin()
    needed = getattr(view, "role_needed", Role.TABLE if unsafe else Role.NONE)
    if g.role >= needed:
        budget: Budget | None = getattr(view, "budget", None)
        if budget is not None and unsafe:  # not for an OPTIONS or HEAD that reaches the same view
            spend(budgets()[budget], grows_store=budget.grows_store)
        return
    if needed is Role.ADMIN:
        raise ApiError(403, "admin_required", "this needs the admin PIN: enter it under Admin on the page")
    raise ApiError(401, "join_required", "join the table first: enter its PIN on the page, or scan its QR code")


def install(app: Flask) -> None:
    app.before_request(_gate)
