"""Synthetic games as photos: a random legal game (synth.selfplay) rendered after every turn,
with optional damage a real table brings — a photo from the opposite side, a hand over an
old tile, an old tile misread. Ground truth comes with every photo. Also what the way to the
reader does to any photo: shrunk and recompressed (a webcam, a messenger), taken askew, taken
in dim light, with the player's shadow over part of the board, under a warm lamp, or
through a wide lens that bows straight lines."""

from __future__ import annotations

import random
from dataclasses import dataclass

import cv2
import numpy as np

from engine.board import Board, is_star
from engine.game import Game
from engine.ruleset import Ruleset
from synth.selfplay import random_game, star_free

DAMAGES = ("none", "opposite-side", "hand", "misread")


@dataclass
class GamePhotos:
    ruleset: Ruleset
    players: int
    boards: list[Board]          # true boards after each turn
    images: list[np.ndarray]     # BGR photos, one per turn
    scores: list[int]            # true score of each turn
    totals: list[int]
    damaged: list[str]           # what was done to each photo ("" for nothing)


def true_game(ruleset: Ruleset, boards: list[Board], players: int) -> Game:
    game = Game(ruleset, players, word_check="off")
    for board in boards:
        game.play(star_free(board))
    return game


def game_photos(ruleset: Ruleset, *, seed: int, turns: int, players: int, style: str,
                damage: str = "none", fonts: str = "heldout",
                box_seed: int | None = None, fold: float = 0.0,
                pose: str = "any") -> GamePhotos:
    """Play and photograph one synthetic game; with `box_seed` every photo shows that one box
    (font and look), else each photo draws its own; `fold` (the board's far half turned that
    many degrees about its hinge) and `pose` (how the camera is held) hold for every photo
    (synth.render.render_photo)."""
    rng = random.Random(seed)
    boards = random_game(ruleset, turns, seed=seed)
    game = true_game(ruleset, boards, players)
    images, damaged = [], []
    hurt = _damaged_turn(boards, rng) if damage != "none" else None
    for number, board in enumerate(boards, 1):
        shown, note = board, ""
        if number == hurt and damage == "misread":
            shown, note = _misread(board, boards[0], rng, ruleset)
        shot = _photograph(shown, seed * 1000 + number, style, fonts, box_seed, fold, pose)
        image = shot.image
        if number == hurt and damage == "opposite-side":
            image, note = np.ascontiguousarray(image[::-1, ::-1]), "photo from the opposite side"
        if number == hurt and damage == "hand":
            image, note = _hand_over_old_tile(image, shot.corners, boards[0], rng)
        images.append(image)
        damaged.append(note)
    return GamePhotos(ruleset, players, boards, images, [t.score.total for t in game.turns],
                      game.totals, damaged)


RETAKES = 5  # photos tried per turn before one with the whole grid in the frame is given up


def _photograph(board: Board, seed: int, style: str, fonts: str, box_seed: int | None = None,
                fold: float = 0.0, pose: str = "any"):
    """A rendered photo of the board with the whole grid in the frame: a player whose photo
    cuts the board off is told so and takes another (seeds seed, seed + 10⁹, …)."""
    from synth.render import render_photo

    for retake in range(RETAKES):
        shot = render_photo(str(board).split("\n"), seed=seed + retake * 10**9, style=style,
                            fonts=fonts, box_seed=box_seed, fold=fold, pose=pose)
        height, width = shot.image.shape[:2]
        x, y = shot.corners[:, 0], shot.corners[:, 1]
        if x.min() >= 0 and y.min() >= 0 and x.max() <= width - 1 and y.max() <= height - 1:
            break
    return shot


def _damaged_turn(boards, rng) -> int:
    """A later turn (not the first) whose photo gets the damage."""
    return rng.randrange(2, len(boards) + 1) if len(boards) > 1 else 1


def _old_tile(first: Board, rng):
    tiles = [(r, c, s) for r, c, s in first.tiles() if not is_star(s)]
    return rng.choice(tiles) if tiles else None


def _misread(board: Board, first: Board, rng, ruleset) -> tuple[Board, str]:
    """The board with one tile of the first turn printed as another letter (a misread)."""
    tile = _old_tile(first, rng)
    if tile is None:
        return board, ""
    row, col, symbol = tile
    other = rng.choice([ch for ch in ruleset.alphabet if ch != symbol])
    shown = board.copy()
    shown.set(row, col, other)
    return shown, f"{symbol} at row {row + 1} col {col + 1} shown as {other}"


def _hand_over_old_tile(image, corners, first: Board, rng) -> tuple[np.ndarray, str]:
    """A skin-coloured hand shape over one tile of the first turn."""
    tile = _old_tile(first, rng)
    if tile is None:
        return image, ""
    row, col, _ = tile
    to_image = cv2.getPerspectiveTransform(
        np.float32([[0, 0], [15, 0], [15, 15], [0, 15]]), np.float32(corners))
    centre = cv2.perspectiveTransform(np.float32([[[col + 0.5, row + 0.5]]]), to_image)[0, 0]
    cell = np.linalg.norm(corners[1] - corners[0]) / 15
    out = image.copy()
    skin = (int(rng.uniform(120, 170)), int(rng.uniform(150, 190)), int(rng.uniform(200, 235)))
    axes = (int(cell * 0.9), int(cell * 0.6))
    cv2.ellipse(out, (int(centre[0]), int(centre[1])), axes, rng.uniform(0, 180), 0, 360, skin,
                -1, cv2.LINE_AA)
    return out, f"hand over row {row + 1} col {col + 1}"


def shrunk(image: np.ndarray, longest: int) -> np.ndarray:
    """The photo at most `longest` px on its longer side, JPEG-compressed at quality 80."""
    scale = longest / max(image.shape[:2])
    if scale < 1:
        image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return recompressed(image, 80)


def dimmed(image: np.ndarray, seed: int = 0) -> np.ndarray:
    """The photo as a dim room or a webcam gives it: half the light (a stop under the renders'
    own range), sensor noise, JPEG quality 75."""
    noise = np.random.default_rng(seed).normal(0, 3, image.shape)
    dark = np.clip(image.astype(np.float32) * 0.5 + noise, 0, 255).astype(np.uint8)
    return recompressed(dark, 75)


def shadowed(image: np.ndarray, seed: int = 0) -> np.ndarray:
    """The photo with a shadow over part of it, as the player leaning over the table under a
    lamp casts one: a soft-edged oval from one side of the photo, 40-60 % darker and a little
    bluer (what lights it is the room, not the lamp), then JPEG quality 85."""
    rng = np.random.default_rng(seed)
    height, width = image.shape[:2]
    side = max(height, width)
    mask = np.zeros((height, width), np.float32)
    edge = rng.integers(4)  # the side the player stands at
    along = rng.uniform(0.2, 0.8)
    centre = [(along * width, 0), (width, along * height), (along * width, height),
              (0, along * height)][edge]
    axes = (int(rng.uniform(0.25, 0.5) * side), int(rng.uniform(0.3, 0.6) * side))
    cv2.ellipse(mask, (int(centre[0]), int(centre[1])), axes, rng.uniform(0, 180), 0, 360, 1.0,
                -1)
    mask = cv2.GaussianBlur(mask, (0, 0), rng.uniform(0.005, 0.03) * side)
    dark = rng.uniform(0.4, 0.6)
    tint = np.float32([1.0, 1.0 - 0.1 * dark, 1.0 - 0.2 * dark])  # B, G, R: blue kept most
    light = 1.0 - mask[..., None] * dark * (2.0 - tint)
    return recompressed(np.clip(image * light, 0, 255).astype(np.uint8), 85)


def bowed(image: np.ndarray, seed: int = 0) -> np.ndarray:
    """The photo through a wide lens whose barrel distortion the camera left in (a webcam, a
    phone's ultra-wide): each pixel drawn from k·ρ² further out, ρ its distance from the
    centre over the half-diagonal, k 0.02-0.08 (the frame's corners show 2-8 % more), then
    JPEG quality 90. Straight lines bow outward, the more the nearer the frame's edge."""
    height, width = image.shape[:2]
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    xs -= (width - 1) / 2
    ys -= (height - 1) / 2
    stretch = 1 + _bow(seed) * (xs * xs + ys * ys) / _half_diagonal(image.shape) ** 2
    out = cv2.remap(image, xs * stretch + (width - 1) / 2, ys * stretch + (height - 1) / 2,
                    cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    return recompressed(out, 90)


def bowed_points(points: np.ndarray, shape: tuple, seed: int = 0) -> np.ndarray:
    """Where `bowed(image, seed)` shows the image's `points` (N×2, x and y)."""
    height, width = shape[:2]
    centre = np.float32([(width - 1) / 2, (height - 1) / 2])
    away = np.float32(points) - centre
    far = np.linalg.norm(away, axis=-1, keepdims=True) / _half_diagonal(shape)
    near, bow = far.copy(), _bow(seed)
    for _ in range(20):  # ρ' (1 + kρ'²) = ρ, solved by fixed point (k ≤ 0.08 converges fast)
        near = far / (1 + bow * near * near)
    return centre + away * (near / np.maximum(far, 1e-9))


def _bow(seed: int) -> float:
    return float(np.random.default_rng([seed, 7]).uniform(0.02, 0.08))


def _half_diagonal(shape: tuple) -> float:
    return float(np.hypot(shape[0], shape[1])) / 2


def warmed(image: np.ndarray, seed: int = 0) -> np.ndarray:
    """The photo under a warm lamp the camera did not balance: blue kept 55-75 %, green
    80-90 %, red whole, then JPEG quality 90."""
    rng = np.random.default_rng([seed, 0xCA57])
    gains = np.float32([rng.uniform(0.55, 0.75), rng.uniform(0.8, 0.9), 1.0])
    return recompressed(np.clip(image * gains, 0, 255).astype(np.uint8), 90)


# (image, seed) -> the photo taken in that light or through that lens
CONDITIONS = {"dim": dimmed, "shadow": shadowed, "bowed": bowed, "warm": warmed}


def recompressed(image: np.ndarray, quality: int) -> np.ndarray:
    """The photo saved as a JPEG of `quality` and decoded again."""
    _, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


def tilted(image: np.ndarray, degrees: float) -> np.ndarray:
    """The photo turned `degrees` counter-clockwise on a canvas that holds all of it, the
    corners filled with the photo's median colour (more table; mirrored edges would add
    copies of the board's lines)."""
    height, width = image.shape[:2]
    matrix = cv2.getRotationMatrix2D((width / 2, height / 2), degrees, 1.0)
    cos, sin = abs(matrix[0, 0]), abs(matrix[0, 1])
    size = (int(height * sin + width * cos), int(height * cos + width * sin))
    matrix[:, 2] += (size[0] - width) / 2, (size[1] - height) / 2
    fill = [float(v) for v in np.median(image.reshape(-1, 3)[::97], axis=0)]
    return cv2.warpAffine(image, matrix, size, flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=fill)
