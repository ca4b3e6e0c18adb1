"""The project's own small error hierarchy; the CLI and the web app turn these into one line.

An error a player can meet carries a code and its parameters (`Message`), so that the web app
can say it in the player's language; `str()` of it is the English text the CLI prints.

>>> str(MoveError(code="gap", cells="H9"))
'gap in the new word at H9'
>>> MoveError(code="gap", turn=3, cells="H9").message.to_json()
{'code': 'gap', 'params': {'turn': 3, 'cells': 'H9'}}
"""

from __future__ import annotations

from collections.abc import Callable

# code → the English text; `{name}` fields are the parameters. The web app's catalogue
# translates these texts (they are its message ids).
MESSAGES = {
    "in_turn": "turn {turn}: {message}",
    # a move (engine.move, engine.game)
    "tile_removed": "tile removed at {cells}",
    "tile_changed": "tile changed at {changes}",
    "star_swap_never": "the {ruleset} rules never swap a star for its letter (at {cells})",
    "star_same_move": "the star taken at {cell} must be played in the same move",
    "star_next_move": "the star taken at {cell} on turn {earlier} must be played in this move",
    "too_many_tiles": "{count} new tiles, but a rack holds {rack}: {cells}",
    "not_in_line": "new tiles are not in one row or column: {cells}",
    "gap": "gap in the new word at {cells}",
    "first_word_centre": "the first word (2+ letters) must cover the centre H8: tiles at {cells}",
    "not_touching": "new tiles do not touch the tiles already on the board: {cells}",
    "too_many_stars": "{count} × stars on the board, but the {ruleset} box has only {have}",
    "too_many_letter": "{count} × letter {letter} on the board, but the {ruleset} box has "
                       "only {have}",
    "word_not_allowed": "word not allowed: {words}",
    # a game (engine.game)
    "players_count": "a game has 2–4 players, not {count}",
    "player_unnamed": "player {number} has no name",
    "player_control": "player {number}'s name holds a control character (a line break, a tab, "
                      "NUL): use letters, digits and spaces",
    "game_won": "the game is over: {name} won; no more turns",
    "no_turn": "no turn {number} (the game has {count} turns)",
    # a photo (vision, companion_app)
    "board_too_small": "board too small to read (cells of {px} px)",
    "photo_format": "{article} {kind} photo cannot be opened here: save it as JPEG "
                    "(iPhone: Settings → Camera → Formats → Most Compatible)",
    "pixels_claimed": "the photo claims {width}×{height} pixels; the limit is {limit} megapixels",
    "reader_lacks_letters": "ruleset {ruleset}: the tile reader knows no letter {letters}; its "
                            "games can be replayed from board texts or a GCG record, not read "
                            "from photos",
    "tile_shown": "the photo shows a tile at {cells} too: check the move",
    "foreign_board": "this photo does not show this game's board (tiles already down where "
                     "they were: {seen} of {tiles})",
    "tiles_gone": "this photo shows no tile at {cells}, where tiles lie already: an older "
                  "photo, or another board",
    "photo_named": "{name}: {error}",
    "too_large_to_read": "{name}: too large to read ({width}×{height} pixels; the limit is "
                         "{limit} megapixels)",
    "photo_cut_short": "{name}: the photo is incomplete (its image data stops early: the file "
                       "was cut short in copying or sending)",
    # a camera watching the table (companion_app.stream)
    "camera_dark": "the camera sees no light: the game waits",
    "camera_lost": "the camera does not see the board: the game waits",
    "camera_back": "the camera sees the board again",
    "not_a_move": "the board changed, but not by a legal move",
    "board_unreadable": "the board cannot be read: {error}",
    "camera_silent": "the camera stopped sending: the game waits",
    "camera_offline": "camera {number} does not answer: the game waits while the server tries "
                      "it again",
    # a camera sending frames to the web app (companion_app.web.live)
    "frame_too_large": "a camera frame may have at most {mb} MB and {mp} megapixels "
                       "(1280×720 is plenty)",
    "frame_not_jpeg": "not a camera frame: send one JPEG image",
    "frame_too_small": "a camera frame of {width}×{height} is too small to show the board: "
                       "send {side} px across at least (1280×720 reads best)",
    "frame_damaged": "the camera frame cannot be decoded (a damaged JPEG)",
    "frames_too_many": "more than {limit} camera frames a second: send fewer",
    "camera_watching": "camera {number} of the server watches this game: stop it first",
    "another_page_camera": "another page's camera watches this game: stop it there first",
    "no_such_camera": "no camera {sent} on this server: it has {count} (erudit serve --camera "
                      "SOURCE)",
    "live_games_busy": "the server already watches {limit} games with a camera, the most it "
                       "takes: stop one first",
    # a box's calibration (calibration)
    "profile_name": "profile name '{name}': use letters, digits, '-', '_' or '.'",
    "unknown_profile": "unknown profile '{name}' (no {folder}); run erudit calibrate",
    "empty_has_tiles": "empty photo {photo}: {count} cells hold tiles ({cells}); photograph "
                       "the board with no tiles on it",
    "alphabet_count": "alphabet photo {photo}: {count} tiles, expected {expected} "
                      "({letters} letters and the star)",
    "alphabet_none": "alphabet photo {photo}: no tiles, expected {expected} "
                     "({letters} letters and the star)",
    "alphabet_rows": "alphabet photo {photo}: the tiles are not laid row by row from the "
                     "top-left corner",
    "alphabet_order": "alphabet photo {photo}: letters out of order at {count} cells: {cells}",
    "empty_photo_refused": "empty photo {name}: {error}",
    "alphabet_photo_refused": "alphabet photo {name}: {error}",
    # the web app (companion_app.web)
    "moved_on": "the game has moved on (next turn is {next}, not {sent}); reload the page",
    "target_score": "the target score must be a whole number up to {limit}, not '{sent}'",
    "box_exists": "a box named '{name}' is already calibrated: choose another name or "
                  "replace it",
    "upload_too_large": "the upload is larger than {mb} MB",
    "another_site": "request from another site ({site}) refused",
    "placed_by_turn": "turn {number} placed that tile; to take it back, undo the turn",
    "no_tile_no_photo": "no tile on {cell} and no photo waiting to be confirmed",
    "whole_number": "field '{field}' must be a whole number, not '{sent}'",
    "host_refused": "request for host '{host}' refused: open the app at this computer's "
                    "address or by the join link",
    "photo_blocked": "{reason}: take the photo again",
    "no_new_tiles": "no new tiles in this photo: if the player passed or exchanged, say so "
                    "with Pass",
    "photo_not_kept": "{name}: cannot keep the photo (JPEG encoding failed)",
    "game_photo_busy": "a photo of this game is still being read: wait for its proposal",
    "server_busy": "the server is busy reading other photos: send it again in a moment",
    # a photo sent to the web app, judged by its header
    "upload_damaged_jpeg": "not a photo (a damaged JPEG: no image size in its header)",
    "upload_damaged_webp": "not a photo (a damaged WebP image)",
    "upload_not_image": "not a photo (expected a JPEG, PNG or WebP image)",
    "upload_empty": "no photo was sent (the file is empty)",
    "upload_no_size": "not a photo (its header gives no size)",
    "upload_cut_short": "the photo is incomplete (its image data stops early): send it again",
    "photo_too_slow": "the photo took over {seconds} s to read; send it again",
    "reader_stopped": "the photo reader stopped while reading this photo; send it again",
    "game_photos_limit": "this game has {count} photos, the most one game keeps: confirm or "
                         "correct the moves by hand from here",
    "photo_space_used": "the server keeps no more photos (its space for photos is used up); the "
                        "games can still be read and played by hand",
    "disk_full_refused": "the server's disk is full: no new photos or games for now; the games "
                         "can still be read",
    "disk_full": "the server's disk is full: nothing was changed; the games can still be read",
    "games_per_hour": "{limit} games were started in the last hour, the most this server takes: "
                      "try again later",
}


def _same(text: str) -> str:
    return text


class Message:
    """A text by code and parameters. A parameter may be a Message of its own, or a list of
    [word, reason] pairs (words refused, each with why); `turn`, when given, names the turn."""

    def __init__(self, code: str, **params):
        if code not in MESSAGES:
            raise KeyError(f"no message {code!r}")
        self.code, self.params = code, params

    def render(self, translate: Callable[[str], str] = _same) -> str:
        values = {key: _value(value, translate) for key, value in self.params.items()
                  if key != "turn"}
        text = translate(MESSAGES[self.code]).format(**values)
        if self.params.get("turn") is not None:
            text = translate(MESSAGES["in_turn"]).format(turn=self.params["turn"], message=text)
        return text

    def __str__(self) -> str:
        return self.render()

    def to_json(self) -> dict:
        return {"code": self.code,
                "params": {key: _json(value) for key, value in self.params.items()}}

    @classmethod
    def from_json(cls, data: dict) -> Message:
        params = {key: cls.from_json(value) if isinstance(value, dict) and "code" in value
                  else value for key, value in data["params"].items()}
        return cls(data["code"], **params)


def _value(value, translate) -> str:
    if isinstance(value, Message):
        return value.render(translate)
    if isinstance(value, EruditError):
        return value.render(translate)
    if isinstance(value, list | tuple) and value and all(isinstance(v, list | tuple)
                                                         for v in value):
        return "; ".join(f"{word}: {translate(reason)}" for word, reason in value)
    return str(value)


def _json(value):
    if isinstance(value, EruditError):
        value = value.message or str(value)
    if isinstance(value, Message):
        return value.to_json()
    if isinstance(value, int | float | str | list | tuple) or value is None:
        return value
    return str(value)   # a path


class EruditError(Exception):
    """Base of every error a user can cause (bad file, bad photo, impossible move).

    Raised with a plain English text, a Message, or `code=` and the message's parameters."""

    def __init__(self, text: str | Message = "", *, code: str | None = None, **params):
        if isinstance(text, Message):
            self.message = text
        else:
            self.message = Message(code, **params) if code is not None else None
        super().__init__(str(self.message) if self.message is not None else text)

    def __reduce__(self):  # a worker process's error keeps its code on the way back
        return _restore, (type(self), self.args, self.__dict__)

    def render(self, translate: Callable[[str], str] = _same) -> str:
        """The error's text, its fixed parts passed through `translate` (a catalogue)."""
        if self.message is not None:
            return self.message.render(translate)
        return translate(str(self))


def _restore(kind: type, args: tuple, state: dict) -> EruditError:
    error = kind.__new__(kind)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class RulesetError(EruditError):
    """A ruleset or layout file is missing or malformed."""


class BoardTextError(EruditError):
    """A board text is ragged or holds a character the ruleset does not know."""


class MoveError(EruditError):
    """The change between two boards is not a legal move."""


class GameError(EruditError):
    """A game operation that the game's state does not allow."""


class RecordError(EruditError):
    """A game record (GCG) cannot be read."""


class PhotoError(EruditError):
    """A photo cannot be read: not an image, no board, board too small, too blurred."""


class ProfileError(EruditError):
    """A calibration profile is missing, malformed, or cannot be built from the given photos."""
