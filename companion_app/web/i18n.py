"""The interface in Russian (default) or English: a small catalogue keyed by the English text.

`?lang=en` (or `ru`) on any page switches and is remembered in a cookie. Messages the engine
raises are English; the common ones are translated here by pattern, the rest shown as they are.
"""

from __future__ import annotations

import re

from flask import g, request

LANGS = ("ru", "en")
COOKIE = "lang"
COOKIE_AGE = 365 * 24 * 3600

RU = {
    # pages
    "Erudit companion": "Эрудит: помощник",
    "companion": "помощник",
    "Working…": "Минутку…",
    "New game": "Новая игра",
    "Box and rules": "Набор и правила",
    "Players in turn order (2–4)": "Игроки по порядку хода (2–4)",
    "Player": "Игрок",
    "optional": "необязательно",
    "Target score (empty: no target)": "Игра до (пусто — без предела)",
    "Word check": "Проверка слов",
    "warn about unknown words": "предупреждать о незнакомых словах",
    "strict: refuse unknown words": "строго: не принимать незнакомые",
    "off": "выключена",
    "Calibrated box": "Откалиброванный набор",
    "none: the general reader": "нет: общее распознавание",
    "Calibrate a box…": "Откалибровать набор…",
    "Start the game": "Начать игру",
    "Games are not listed here: the game page shows a link and a QR code for the other phones "
    "at the table. Keep the link to come back.":
        "Игры здесь не перечисляются: на странице игры есть ссылка и QR-код для других "
        "телефонов за столом. Сохраните ссылку, чтобы вернуться.",
    "Something went wrong": "Что-то пошло не так",
    "Home": "На главную",
    "to move": "ходит",
    "Playing to {target}: when someone reaches it, the players who still have a turn in that "
    "round play it.":
        "Игра до {target} очков: когда кто-то их набрал, игроки, у которых в этом круге ещё "
        "есть ход, доигрывают круг.",
    "No target score: the game ends by agreement.": "Без предела очков: игра кончается по "
                                                    "договорённости.",
    "Game over: a tie.": "Игра окончена: ничья.",
    "Game over: {name} wins.": "Игра окончена: победил(а) {name}.",
    "Turn {n}: check the reading": "Ход {n}: проверьте, что прочитано",
    "The reader is not sure: check the highlighted tiles.":
        "Распознавание не уверено: проверьте выделенные фишки.",
    "points": "очков",
    "whole rack": "все фишки",
    "A star's letter is not known yet: tap the star ({cells}) and pick its letter.":
        "Буква звёздочки пока не известна: нажмите на неё ({cells}) и выберите букву.",
    "Confirm": "Подтвердить",
    "Discard photo": "Отменить фото",
    "Other readings": "Другие варианты",
    "Use this reading": "Взять этот вариант",
    "New tiles are outlined on the photo and on the board below.":
        "Новые фишки обведены на фото и на доске ниже.",
    "Score breakdown": "Подсчёт очков",
    "Turn {n}: {name}": "Ход {n}: {name}",
    "Reading the board…": "Читаю доску…",
    "Photo of the board": "Снять доску",
    ("Stand and hold the phone above the board, the whole board in the frame: "
     "from a chair the tiles are read worse."):
        ("Встаньте и держите телефон над доской, чтобы вся доска была в кадре: "
         "снятые со стула фишки читаются хуже."),
    "Send": "Отправить",
    "Pass": "Пас",
    "Exchange": "Обмен",
    "Board": "Доска",
    "Tap a tile to correct its letter or to declare a star's letter.":
        "Нажмите на фишку, чтобы исправить букву или назвать букву звёздочки.",
    "The board as photographed, straightened": "Доска на фото, выровненная",
    "Original photo": "Исходное фото",
    "Correct a cell by name": "Исправить клетку по имени",
    "letter": "буква",
    "Save": "Сохранить",
    "Turns": "Ходы",
    "No turns yet.": "Ходов пока нет.",
    "photo of turn": "фото хода",
    "exchange": "обмен",
    "pass": "пас",
    "The reader was not sure": "Распознавание не было уверено",
    "Take back turn {n}?": "Отменить ход {n}?",
    "Undo turn {n}": "Отменить ход {n}",
    "End the game now?": "Закончить игру сейчас?",
    "End game": "Закончить игру",
    "Export GCG": "Скачать GCG",
    "Check a word": "Проверить слово",
    "word": "слово",
    "Check": "Проверить",
    "Unseen tiles": "Фишки не на доске",
    "In the bag or on the racks.": "В мешке или на подставках.",
    "Join from another phone": "Подключить другой телефон",
    "Anyone with this link can change the game. Share it only at the table.":
        "Любой, у кого есть эта ссылка, может менять игру. Делитесь ею только за столом.",
    "Cell": "Клетка",
    "a star standing for this letter": "звёздочка вместо этой буквы",
    "star, letter unknown": "звёздочка, буква неизвестна",
    "empty": "пусто",
    "Cancel": "Отмена",
    "turn": "ход",
    "Turn": "Ход",
    "score explained": "разбор очков",
    "Back to the game": "К игре",
    "Letter premiums count only under tiles placed in this turn; then word premiums multiply "
    "the word.":
        "Премии за букву действуют только под фишками этого хода; потом премии за слово "
        "умножают слово.",
    "All {rack} tiles of the rack: +{bonus}": "Все {rack} фишек с подставки: +{bonus}",
    "Total": "Итого",
    "Totals after this turn": "Счёт после хода",
    "Board after the turn": "Доска после хода",
    "cell": "клетка",
    "premium": "премия",
    "used": "уже использована",
    "on turn": "в ходе",
    "already on the board": "уже на доске",
    "allowed": "можно",
    "not allowed": "нельзя",
    "The convention: a common noun in the nominative singular (pluralia tantum allowed).":
        "Уговор: нарицательное существительное в именительном падеже единственного числа "
        "(слова только множественного числа — можно).",
    # the box setup page
    "Calibrate a box": "Калибровка набора",
    "Two photos teach the app your own box: the board with no tiles on it (its premium "
    "squares and their colours in your light) and, if you like, every tile laid out in "
    "alphabet order — the ruleset's letters, then the star, row by row from the top-left "
    "corner. Its letters are then read as your box prints them.":
        "Два фото знакомят помощника с вашим набором: доска без фишек (её премиальные клетки и "
        "их цвета при вашем свете) и, по желанию, все фишки, выложенные по алфавиту — буквы "
        "правил, затем звёздочка, ряд за рядом от левого верхнего угла. Тогда буквы читаются "
        "такими, какими их печатает ваш набор.",
    "Calibrating…": "Калибрую…",
    "Name of the box": "Название набора",
    "Photo of the empty board": "Фото пустой доски",
    "Photo of the tiles in alphabet order (optional)": "Фото фишек по алфавиту (необязательно)",
    "replace a box of the same name": "заменить набор с тем же названием",
    "Calibrate": "Откалибровать",
    "Rules": "Правила",
    "its layout differs from the rules' at {n} cells (outlined); games with this box use the "
    "box's layout":
        "раскладка отличается от правил в {n} клетках (обведены); в играх с этим набором "
        "действует раскладка набора",
    "its layout is the rules' layout": "раскладка совпадает с правилами",
    "Box {name}": "Набор {name}",
    "its layout differs from the rules' at {n} cells; the box's layout is used":
        "его раскладка отличается от правил в {n} клетках; действует раскладка набора",
    "Layout of the box": "Раскладка набора",
    "Square colours": "Цвета клеток",
    "plain square": "обычная клетка",
    "centre": "центр",
    "Letters known by sight": "Буквы, изученные по фото",
    "No alphabet photo: letters are read by the general model.":
        "Фото алфавита нет: буквы читает общая модель.",
    # premiums (engine.ruleset.PREMIUM_NAMES)
    "×2 letter": "×2 буква",
    "×3 letter": "×3 буква",
    "×2 word": "×2 слово",
    "×3 word": "×3 слово",
    # word verdicts (engine.words)
    "common noun, nominative": "нарицательное существительное, им. падеж",
    "not in the dictionary": "нет в словаре",
    "not a noun": "не существительное",
    "a proper name or abbreviation": "имя собственное или сокращение",
    "not in the nominative singular": "не в именительном падеже единственного числа",
    "not a word of letters": "не слово из букв",
    # photos that cannot be read (companion_app.web.uploads, vision.photo, vision.locate)
    "no board found": "доска не найдена",
    "board too blurred": "доска слишком размыта",
    "board cut off at the photo's edge": "доска обрезана краем фото",
    "not an image": "это не изображение",
    "not 8-bit": "не 8-битное",
    "photo too small to hold a board": "фото слишком маленькое: доска на нём не поместится",
    "expected a colour picture": "нужна цветная картинка",
    "expected a JPEG, PNG or WebP image": "нужно изображение JPEG, PNG или WebP",
    "a damaged JPEG: no image size in its header": "повреждённый JPEG: в заголовке нет размера",
    "a damaged WebP image": "повреждённое изображение WebP",
    "its header gives no size": "в заголовке нет размера",
    "the image data cannot be decoded": "данные изображения не читаются",
}

# Error messages (ours and the engine's): English pattern → Russian, with the same groups.
RU_ERRORS = [
    # calibration (calibration.build, companion_app.web.views.boxes)
    (r"empty photo (.+?): (.+)", "фото пустой доски {0}: {1}"),
    (r"alphabet photo (.+?): (.+)", "фото алфавита {0}: {1}"),
    (r"(\d+) cells hold tiles \((.+)\); photograph the board with no tiles on it",
     "на {0} клетках лежат фишки ({1}); снимите доску без фишек"),
    (r"(\d+) tiles, expected (\d+) \((\d+) letters and the star\)",
     "фишек {0}, а нужно {1} ({2} букв и звёздочка)"),
    (r"no tiles, expected (\d+) \((\d+) letters and the star\)",
     "фишек нет, а нужно {0} ({1} букв и звёздочка)"),
    (r"the tiles are not laid row by row from the top-left corner",
     "фишки выложены не ряд за рядом от левого верхнего угла"),
    (r"letters out of order at (\d+) cells: (.+)", "буквы не по порядку в {0} клетках: {1}"),
    (r"profile name '(.*)': use letters, digits, '-', '_' or '\.'",
     "название набора '{0}': только буквы, цифры, '-', '_' или '.'"),
    (r"a box named '(.+)' is already calibrated: choose another name or replace it",
     "набор '{0}' уже откалиброван: выберите другое название или замените его"),
    (r"no photo of the empty board \(field 'empty'\)", "нет фото пустой доски (поле 'empty')"),
    (r"unknown profile '(.+)' \(no (.+)\); run erudit calibrate",
     "набор '{0}' не откалиброван (нет {1}); откалибруйте его"),
    (r"damaged \((.*)\); calibrate it again", "повреждён ({0}); откалибруйте его заново"),
    (r"the target score must be a whole number up to (\d+), not '(.*)'",
     "предел очков — целое число до {0}, а не '{1}'"),
    (r"the game has moved on \(next turn is (\d+), not (\d+)\); reload the page",
     "игра ушла вперёд (следующий ход {0}, а не {1}); обновите страницу"),
    (r"this photo's proposal was replaced or discarded; reload the page",
     "предложение по этому фото заменено или отменено; обновите страницу"),
    (r"the form has expired or did not come from this page; reload and retry",
     "форма устарела или отправлена не с этой страницы; обновите страницу и повторите"),
    (r"request from another site \((.*)\) refused", "запрос с другого сайта ({0}) отклонён"),
    (r"no such game", "такой игры нет"),
    (r"the upload is larger than ([\d.]+) MB", "файл больше {0} МБ"),
    (r"the photo claims (\S+) pixels; the limit is (\d+) megapixels",
     "в фото заявлено {0} пикселей; предел — {1} мегапикселей"),
    (r"not a photo \((.*)\)", "это не фото ({0})"),
    (r"not an image \((.*)\)", "это не изображение ({0})"),
    (r"ruleset (\S+): the tile reader knows no letter (.+); its games can be replayed from "
     r"board texts or a GCG record, not read from photos",
     "правила {0}: распознаватель фишек не знает букв {1}; игры по ним можно пересчитать по "
     "текстам досок или записи GCG, но не прочитать с фото"),
    (r"board too small to read \(cells of (\d+) px\)",
     "доска слишком мелкая, чтобы прочитать (клетки по {0} пикс.)"),
    (r"the photo is incomplete \(its image data stops early\): send it again",
     "фото неполное (данные изображения обрываются): отправьте его ещё раз"),
    (r"the photo is damaged \(part of its image data is corrupt, so part of the picture is "
     r"lost\): send it again",
     "фото повреждено (часть данных изображения испорчена, часть картинки потеряна): "
     "отправьте его ещё раз"),
    (r"no photo was sent \(the file is empty\)", "фото не отправлено (файл пустой)"),
    (r"an? (\w+) photo cannot be opened here: save it as JPEG "
     r"\(iPhone: Settings → Camera → Formats → Most Compatible\)",
     "фото в формате {0} здесь не открыть: сохраните его в JPEG "
     "(iPhone: Настройки → Камера → Форматы → Наиболее совместимый)"),
    (r"nothing to undo: no turn has been played", "нечего отменять: ходов ещё не было"),
    (r"the game is over \(a tie\); no more turns", "игра окончена (ничья); ходов больше нет"),
    (r"the game is over: (.+) won; no more turns",
     "игра окончена: победил(а) {0}; ходов больше нет"),
    (r"the game is over; no more turns", "игра окончена; ходов больше нет"),
    (r"turn (\d+) placed that tile; to take it back, undo the turn",
     "эту фишку поставил ход {0}; чтобы убрать её, отмените ход"),
    (r"no tile on (\w+) and no photo waiting to be confirmed",
     "на {0} нет фишки и нет фото, ждущего подтверждения"),
    (r"two players have the same name", "у двух игроков одинаковое имя"),
    (r"player (\d+) has no name", "у игрока {0} нет имени"),
    (r"a game has 2–4 players, not (\d+)", "в игре 2–4 игрока, а не {0}"),
    (r"unsure reading: check the highlighted cells",
     "распознавание не уверено: проверьте выделенные клетки"),
    (r"the photo shows a tile at (.+) too: check the move",
     "на фото видна фишка и на {0}: проверьте ход"),
    (r"this photo does not show this game's board \(tiles already down where they were: "
     r"(\d+) of (\d+)\)",
     "на этом фото не доска этой игры (уже выложенных фишек на своих местах: {0} из {1})"),
    (r"the board is hard to read in this photo: check the move",
     "доску на этом фото трудно разобрать: проверьте ход"),
    (r"turn (\d+): (.*)", "ход {0}: {1}"),
    # the move's legality (engine.move, engine.game)
    (r"tile removed at (.+)", "фишка убрана: {0}"),
    (r"tile changed at (.+)", "фишка заменена: {0}"),
    (r"the (\S+) rules never swap a star for its letter \(at (.+)\)",
     "по правилам {0} звёздочку не меняют на её букву (на {1})"),
    (r"the star taken at (\w+) must be played in the same move",
     "звёздочку, взятую с {0}, нужно сыграть в том же ходу"),
    (r"the star taken at (\w+) on turn (\d+) must be played in this move",
     "звёздочку, взятую с {0} на ходу {1}, нужно сыграть в этом ходу"),
    (r"(\d+) new tiles, but a rack holds (\d+): (.+)",
     "новых фишек {0}, а на подставке их {1}: {2}"),
    (r"new tiles are not in one row or column: (.+)",
     "новые фишки не в одной строке или столбце: {0}"),
    (r"gap in the new word at (.+)", "пропуск в новом слове: {0}"),
    (r"the first word \(2\+ letters\) must cover the centre H8: tiles at (.+)",
     "первое слово (от 2 букв) должно закрыть центр H8: фишки на {0}"),
    (r"new tiles do not touch the tiles already on the board: (.+)",
     "новые фишки не касаются фишек на доске: {0}"),
    (r"(\d+) × stars on the board, but the (\S+) box has only (\d+)",
     "на доске звёздочек: {0}, а в наборе {1} их только {2}"),
    (r"(\d+) × letter (\S+) on the board, but the (\S+) box has only (\d+)",
     "на доске букв {1}: {0}, а в наборе {2} их только {3}"),
    (r"word not allowed: (.+)", "слово не допускается: {0}"),
    (r"([^:;]+): ([^:;]+); (.+)", "{0}: {1}; {2}"),  # several words' verdicts
    (r"([^:;]+): ([^:;]+)", "{0}: {1}"),  # one word's verdict
]


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


def gettext(text: str, **values) -> str:
    """`text` in the page's language; `{name}` fields are filled from `values`."""
    out = RU.get(text, text) if lang() == "ru" else text
    return out.format(**values) if values else out


def translate_error(message: str) -> str:
    """An error line in the page's language (engine details inside stay as they are)."""
    if lang() != "ru":
        return message
    for pattern, russian in RU_ERRORS:
        match = re.fullmatch(pattern, message)
        if match:  # the parts may be messages or phrases of their own ("turn 3: gap in ...")
            return russian.format(*(translate_error(part) for part in match.groups()))
    return RU.get(message, message)
