"""Word check by the usual Эрудит convention: a common noun in the nominative singular
(pluralia tantum allowed), looked up in the OpenCorpora dictionary through pymorphy3.

>>> check_word("пихта").ok, check_word("москва").ok, check_word("кота").ok
(True, False, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

MODES = ("off", "warn", "strict")
_PROPER = {"Name", "Surn", "Patr", "Geox", "Orgn", "Trad", "Abbr", "Init"}


@dataclass(frozen=True)
class Verdict:
    word: str
    ok: bool
    reason: str


@lru_cache(maxsize=1)
def _morph():
    import pymorphy3

    return pymorphy3.MorphAnalyzer()


def _plain(text: str) -> str:
    return text.lower().replace("ё", "е")


@lru_cache(maxsize=4096)
def check_word(word: str) -> Verdict:
    """Whether `word` is allowed: a known common noun, nominative, singular or plurale tantum."""
    text = word.lower()
    if not text.isalpha():
        return Verdict(word, False, "not a word of letters")
    morph = _morph()
    if not morph.word_is_known(text):
        return Verdict(word, False, "not in the dictionary")
    parses = [p for p in morph.parse(text) if "NOUN" in p.tag]
    if not parses:
        return Verdict(word, False, "not a noun")
    common = [p for p in parses if not (_PROPER & set(p.tag.grammemes))]
    if not common:
        return Verdict(word, False, "a proper name or abbreviation")
    for p in common:
        nominative = "nomn" in p.tag
        singular = "sing" in p.tag and _plain(p.normal_form) == _plain(text)
        if nominative and (singular or "Pltm" in p.tag):
            return Verdict(word, True, "common noun, nominative")
    return Verdict(word, False, "not in the nominative singular")


def check_words(words: list[str], dictionary: str) -> list[Verdict]:
    """Verdicts for the words a move formed; words with an unknown star are not judged."""
    if dictionary != "ru":
        return []
    return [check_word(w) for w in words if "*" not in w]
