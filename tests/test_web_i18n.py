"""The interface's Russian: Flask-Babel catalogues that cover every text, plural forms, and
errors said from their codes (the engine's English stays for the CLI)."""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from companion_app.web.i18n import ngettext, translate_error
from engine.errors import MESSAGES, GameError, Message, MoveError, PhotoError
from engine.game import Game
from engine.ruleset import load_ruleset

REPO = Path(__file__).resolve().parent.parent
WEB = REPO / "companion_app" / "web"
CATALOGUE = WEB / "translations" / "ru" / "LC_MESSAGES"

pytest_plugins = ["test_web_helpers"]   # the app fixture


def russian():
    with open(CATALOGUE / "messages.po", "rb") as source:
        return read_po(source)


def texts_in_templates() -> set:
    single = re.compile(r"""\b(?:_|gettext)\(\s*(["'])(.+?)\1""")
    counted = re.compile(r"""\b(?:ngettext|counted_forms)\(\s*(["'])(.+?)\1\s*,\s*(["'])(.+?)\3""")
    found = set()
    for path in list((WEB / "templates").glob("*.html")) + list(WEB.rglob("*.py")):
        text = path.read_text("utf-8")
        found |= {m.group(2) for m in single.finditer(text)}
        found |= {(m.group(2), m.group(4)) for m in counted.finditer(text)}
    return found


def test_every_text_and_error_code_has_a_russian_translation():
    catalogue = russian()
    wanted = texts_in_templates() | set(MESSAGES.values())
    assert len(wanted) > 80
    missing = []
    for text in wanted:
        entry = catalogue.get(text[0] if isinstance(text, tuple) else text)
        if entry is None or not entry.string or not all(entry.string):
            missing.append(text)
    assert missing == []


def test_the_shipped_mo_is_compiled_from_the_po():
    def flat(x):
        return tuple(x) if isinstance(x, list | tuple) else x

    def entries(catalogue) -> dict:
        return {flat(m.id): flat(m.string) for m in catalogue if m.id}

    with open(CATALOGUE / "messages.mo", "rb") as source:
        assert entries(read_mo(source)) == entries(russian())


def test_pip_install_takes_the_catalogues():
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["companion_app.web"]
    for path in (CATALOGUE / "messages.mo", CATALOGUE / "messages.po"):
        inside = path.relative_to(WEB).as_posix()
        assert any(fnmatch(inside, pattern) for pattern in patterns), inside


@pytest.mark.parametrize(("n", "ru", "en"), [
    (1, "1 очко", "1 point"), (21, "21 очко", "21 points"), (34, "34 очка", "34 points"),
    (2, "2 очка", "2 points"), (11, "11 очков", "11 points"), (0, "0 очков", "0 points"),
    (112, "112 очков", "112 points"), (5, "5 очков", "5 points")])
def test_points_take_the_russian_plural(app, n, ru, en):
    assert said(app, "ru", lambda: ngettext("{n} point", "{n} points", n)) == ru
    assert said(app, "en", lambda: ngettext("{n} point", "{n} points", n)) == en


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_script_picks_the_counted_form_the_catalogue_gives(app, lang):
    """The forms a page's script chooses from by the number's CLDR category (as the browser's
    Intl.PluralRules names it) say each number as the catalogue's own plural does."""
    from babel import Locale

    from companion_app.web.i18n import counted_forms

    phrase = ("The last frame came {n} second ago.", "The last frame came {n} seconds ago.")
    forms = said(app, lang, lambda: counted_forms(*phrase))
    for n in (0, 1, 2, 4, 5, 11, 12, 21, 22, 25, 101, 111):
        picked = forms[Locale(lang).plural_form(n)].format(n=n)
        assert picked == said(app, lang, lambda n=n: ngettext(*phrase, n)), n
    assert said(app, "ru", lambda: ngettext(*phrase, 3)) == "Последний кадр пришёл 3 секунды назад."


def said(app, lang: str, text):
    """text() in a request for a page in `lang`."""
    with app.test_request_context(f"/?lang={lang}"):
        app.preprocess_request()
        return text()


def raised(action) -> Exception:
    with pytest.raises(Exception) as caught:
        action()
    return caught.value


def test_engine_errors_are_said_from_their_codes(app):
    erudit = load_ruleset("erudit")
    game = Game(erudit, ["Аня", "Борис"], word_check="strict")
    from conftest import place
    gap = raised(lambda: game.play(place(place(game.board, "G8", "КОТ"), "K8", "Т")))
    words = raised(lambda: game.play(place(game.board, "G8", "МОСКВА")))
    assert isinstance(gap, MoveError) and gap.message.code == "gap"
    # the CLI's English, as before
    assert str(gap) == "turn 1: gap in the new word at J8"
    assert str(words) == "turn 1: word not allowed: МОСКВА: a proper name or abbreviation"
    def ru(error):
        return said(app, "ru", lambda: translate_error(error))

    assert ru(gap) == "ход 1: пропуск в новом слове: J8"
    assert ru(words) == (
        "ход 1: слово не допускается: МОСКВА: имя собственное или сокращение")
    assert ru(GameError(code="game_won", name="Борис")) == (
        "игра окончена, победил(а) Борис: ходов больше нет")
    assert ru(PhotoError("no board found")) == "доска не найдена"
    assert ru(Message("tile_shown", cells="J9, H2")) == (
        "на фото видна фишка и на J9, H2: проверьте ход")
    nested = PhotoError(code="empty_photo_refused", name="e.png",
                        error=PhotoError("no board found"))
    assert ru(nested) == "фото пустой доски e.png: доска не найдена"
    assert ru("an unknown note") == "an unknown note"   # left as it is
    assert said(app, "en", lambda: translate_error(gap)) == "turn 1: gap in the new word at J8"


def test_an_error_answer_gives_its_code_and_parameters(app):
    from test_web_helpers import csrf_of

    client = app.test_client()     # a Russian phone
    answer = client.post("/games", headers={"Accept": "application/json",
                                            "X-CSRF-Token": csrf_of(client)},
                         data={"player": ["Аня", "Борис"], "target": "сто"})
    body = answer.get_json()
    assert answer.status_code == 400
    assert body["code"] == "target_score" and body["params"]["sent"] == "сто"
    assert body["error"].startswith("предел очков — целое число до ")


def test_an_error_keeps_its_code_across_processes():
    import pickle

    error = pickle.loads(pickle.dumps(MoveError(code="gap", turn=2, cells="H9")))
    assert error.message.code == "gap" and str(error) == "turn 2: gap in the new word at H9"
