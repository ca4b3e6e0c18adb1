"""The interface in Russian (default) or English, through Flask-Babel and its catalogues.

Message ids are the English texts; the Russian catalogue is
translations/ru/LC_MESSAGES/messages.po, compiled to the messages.mo beside it (shipped in the
package; after editing the .po run `pybabel compile -d companion_app/web/translations`).
Errors carry a code and parameters (engine.errors.Message), and are said here in the page's
language from the same catalogue.

`?lang=en` (or `ru`) on any page switches and is remembered in a cookie.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask, g, request
from flask_babel import Babel, get_translations

from engine.errors import EruditError, Message

LANGS = ("ru", "en")
COOKIE = "lang"
COOKIE_AGE = 365 * 24 * 3600


def init_app(app: Flask) -> None:
    """Catalogues from the package's translations/ folder; the language as chosen below."""
    Babel(app, locale_selector=lang, configure_jinja=False)
    app.before_request(select_language)
    app.after_request(remember_language)


def select_language() -> None:
    """Before each request: `?lang=` wins (and is remembered), then the cookie, then Russian."""
    asked = request.args.get("lang")
    g.lang_chosen = asked if asked in LANGS else None
    cookie = request.cookies.get(COOKIE)
    g.lang = g.lang_chosen or (cookie if cookie in LANGS else "ru")


def remember_language(response):
    if g.get("lang_chosen"):
        response.set_cookie(COOKIE, g.lang_chosen, max_age=COOKIE_AGE, samesite="Lax")
    return response


def lang() -> str:
    return g.get("lang", "ru")


def plain(text: str) -> str:
    """`text` from the catalogue, as it is written there."""
    return get_translations().gettext(text)


def gettext(text: str, **values) -> str:
    """`text` in the page's language; `{name}` fields are filled from `values`."""
    out = plain(text)
    return out.format(**values) if values else out


def ngettext(singular: str, plural: str, n: int, **values) -> str:
    """The form of a counted phrase that fits `n` ("21 очко", "34 очка", "5 очков");
    `{n}` and the other `{name}` fields are filled in."""
    return get_translations().ngettext(singular, plural, n).format(n=n, **values)


def translate_error(error: EruditError | Message | str) -> str:
    """An error or note in the page's language: by its code when it has one, else its text."""
    if isinstance(error, EruditError | Message):
        return error.render(plain)
    return plain(str(error))


def counted_forms(singular: str, plural: str) -> dict:
    """A counted phrase's forms for a script to choose from by the number's plural category
    (`Intl.PluralRules`: one, few, many, other), `{n}` left to fill: "1 секунду", "2 секунды",
    "5 секунд" (English has only one and other)."""
    forms = get_translations().ngettext
    return {"one": forms(singular, plural, 1), "few": forms(singular, plural, 2),
            "many": forms(singular, plural, 5), "other": forms(singular, plural, 2)}


def script_texts() -> dict:
    """What the page's script says itself, in the page's language."""
    return {
        "network": gettext("No connection to the server: check the Wi-Fi and try again."),
        "server": gettext("The server did not answer properly (error {status}): try again."),
        "failed": gettext("That did not work: try again."),
        "shrinking": gettext("Preparing the photo…"),
        "sending": gettext("Sending the photo: {sent} of {total} MB"),
        "reading": gettext("Reading the board…"),
        "forget": gettext("Forget"),
        "live": live_texts(),
    }


def live_texts() -> dict:
    """What the camera panel says as the game's live state changes."""
    watching = gettext("{name} is watching the board: moves are taken by themselves.")
    return {
        "off": gettext("No camera is watching the board."),
        "starting": gettext("The camera is starting…"),
        "mine": watching.format(name=gettext("This device's camera")),
        "browser": watching.format(name=gettext("A camera at the table")),
        "camera": watching,
        "paused": gettext("Paused: {note}"),
        "paused_plain": gettext("Paused."),
        "last_frame": counted_forms("The last frame came {n} second ago.",
                                    "The last frame came {n} seconds ago."),
        "watch_with": gettext("Watch with {name}"),
        "denied": gettext("The browser may not use the camera: allow it in the site's settings."),
        "no_camera": gettext("This device has no camera the browser can use."),
        "failed": gettext("The camera did not start ({error})."),
    }


def translator() -> Callable[[str], str]:
    """The page's catalogue as a function that still works once the request has ended (an
    event stream says things long after)."""
    return get_translations().gettext
