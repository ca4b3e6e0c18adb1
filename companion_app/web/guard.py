"""Protection of state-changing requests: a per-session CSRF token and an Origin check.

The token lives in the signed session cookie; every POST must echo it in the `csrf` form field
or the `X-CSRF-Token` header. A browser also names the page that sent a request (Origin, or
Referer): it must be this server.
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import urlsplit

from flask import request, session

from engine.errors import EruditError

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class Forbidden(EruditError):
    """A state-changing request without a valid CSRF token or from another site."""


def csrf_token() -> str:
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(32)
    return session["csrf"]


def check_request() -> None:
    """Run before every request: POSTs need a matching token and a same-site origin."""
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
