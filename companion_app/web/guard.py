"""Protection of every request: the server's own names only, a per-session CSRF token and an
Origin check.

A page on another site can point its own domain name at this server's address (DNS
rebinding) and then talk to it as if it were that site: its requests carry that name in the
Host header, so only this server's names are answered: an IP address (a browser sends the
address typed in or scanned from the join code), `localhost`, this machine's name, and the
names given in ALLOWED_HOSTS (a reverse proxy's, say).
The token lives in the signed session cookie; every POST must echo it in the `csrf` form field
or the `X-CSRF-Token` header. A browser also names the page that sent a request (Origin, or
Referer): it must be this server.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import socket
from urllib.parse import urlsplit

from flask import current_app, request, session

from engine.board import cut
from engine.errors import EruditError

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class Forbidden(EruditError):
    """A state-changing request without a valid CSRF token or from another site."""


def csrf_token() -> str:
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(32)
    return session["csrf"]


def own_names() -> set[str]:
    """The names this machine answers to besides its addresses (lower case)."""
    names = {"localhost"}
    try:
        name = socket.gethostname().lower()
    except OSError:
        return names
    return names | {name, name.split(".")[0], f"{name.split('.')[0]}.local"}


def allowed_host(host: str, names: set[str]) -> bool:
    """Whether `host` (a Host header's value: name or address, maybe with a port) is ours."""
    parts = urlsplit(f"//{host}")
    try:
        name = (parts.hostname or "").rstrip(".")
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError:
        return False
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return name in names


def check_request() -> None:
    """Run before every request: only this server's names; POSTs need a matching token and a
    same-site origin."""
    if not allowed_host(request.host, current_app.config["ALLOWED_HOSTS"]):
        raise Forbidden(code="host_refused", host=cut(request.host))
    if request.method in SAFE_METHODS:
        return
    _check_origin()
    sent = request.headers.get("X-CSRF-Token") or request.form.get("csrf", "")
    expected = session.get("csrf")
    if not expected or not sent or not hmac.compare_digest(str(sent), str(expected)):
        raise Forbidden("the form has expired or did not come from this page; reload and retry")


def _check_origin() -> None:
    source = request.headers.get("Origin") or request.headers.get("Referer")
    if not source:
        return  # non-browser clients and some privacy settings send none; the token still guards
    parts = urlsplit(source)
    if parts.netloc != request.host:
        raise Forbidden(code="another_site", site=parts.netloc or source)
