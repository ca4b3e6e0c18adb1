"""Synthetic photos and games with exact ground truth, for tests, benchmarks and training
(needs the `render` extra: Pillow). Nothing at run time imports it.

    >>> from synth import render_photo
    >>> shot = render_photo(board_rows, seed=1, style="erudit-black")
    >>> shot.image, shot.corners        # a BGR photo and the grid's true corners

`render_photo` draws one box (`STYLES`: the four looks measured everywhere) photographed on a
table; `random_game` plays a random legal game of real nouns; `game_photos` renders one after
every turn; `dimmed`, `shadowed`, `bowed`, `warmed` (`CONDITIONS`), `shrunk` and `tilted` do to a
photo what a room, a lens or a messenger does.
"""

from synth.photos import (
    CONDITIONS,
    DAMAGES,
    GamePhotos,
    bowed,
    dimmed,
    game_photos,
    shadowed,
    shrunk,
    tilted,
    warmed,
)
from synth.render import (
    ANY_STYLES,
    CALIBRATION_STYLES,
    STYLES,
    Shot,
    font_paths,
    render_photo,
    table_background,
)
from synth.selfplay import random_game, star_free

__all__ = [
    "ANY_STYLES", "CALIBRATION_STYLES", "CONDITIONS", "DAMAGES", "GamePhotos", "STYLES", "Shot",
    "bowed", "dimmed", "font_paths", "game_photos", "random_game", "render_photo", "shadowed",
    "shrunk", "star_free", "table_background", "tilted", "warmed",
]
