"""Synthetic videos of a game: a fixed camera above the table, a hand laying each move's
tiles one by one, pauses, a hand hovering without playing, slight shake and noise; the
camera can lose the board for a while or be knocked aside. Ground truth comes with it.

    >>> video = game_video("game.avi", load_ruleset("erudit"), seed=3, turns=4)
    >>> video.boards[-1], video.scores, video.laid   # the truth, and when each move was laid

Every frame of one board state is the same render (render_photo's `scene`), so the only
changes a watcher sees are the hand, the tiles it lays, the shake and the noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from engine.board import Board
from engine.ruleset import Ruleset
from synth.photos import true_game
from synth.render import render_photo
from synth.selfplay import random_game

SKIN = (120, 160, 215)  # BGR of a hand under a lamp
REACH, LAY, AWAY = 0.6, 0.3, 0.3  # s: a hand coming in, laying one tile, out of view between
HOVER = 1.2  # s a hand hovers over the board without playing
SHAKE = 0.6  # px: a camera on a stand trembles this much from frame to frame
NOISE = 2.0  # grey levels of sensor noise
NOISE_FIELDS = 5  # noise fields drawn once, one picked for each frame


@dataclass
class GameVideo:
    ruleset: Ruleset
    players: int
    path: str
    fps: float
    frames: int
    boards: list[Board]              # true boards after each move
    scores: list[int]
    totals: list[int]
    laid: list[float] = field(default_factory=list)    # s: the hand gone after each move
    lost: tuple[float, float] | None = None            # s: when the camera saw no board


class _Scene:
    """The renders of one table, one per board state, and the frames written from them."""

    def __init__(self, writer, seed: int, style: str, size, fps: float):
        self.writer, self.seed, self.style, self.size, self.fps = writer, seed, style, size, fps
        self.rng = np.random.default_rng(seed)
        self.renders: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.frames, self.offset, self.blind = 0, np.zeros(2), None
        self.fields = None

    @property
    def time(self) -> float:
        return self.frames / self.fps

    def render(self, board: Board):
        text = str(board)
        if text not in self.renders:
            shot = render_photo(text.split("\n"), seed=self.seed, style=self.style,
                                size=self.size, pose="frontal", scene=True)
            self.renders[text] = (shot.image, shot.corners)
        return self.renders[text]

    def hold(self, board: Board, seconds: float, hand=None) -> None:
        """Frames of `board` for `seconds`; `hand(p)` gives the hand's tip and base in the
        photo at progress p (0 → 1 over the stretch), or None for no hand."""
        image, _ = self.render(board)
        count = max(1, round(seconds * self.fps))
        for i in range(count):
            frame = image.copy()
            if hand is not None:
                draw_arm(frame, *hand((i + 1) / count))
            self.writer.write(self._filmed(frame))
            self.frames += 1

    def _filmed(self, frame: np.ndarray) -> np.ndarray:
        if self.blind is not None:
            frame = self.blind(frame)
        dx, dy = self.offset + self.rng.normal(0, SHAKE, 2)
        moved = cv2.warpAffine(frame, np.float32([[1, 0, dx], [0, 1, dy]]),
                               (frame.shape[1], frame.shape[0]), borderMode=cv2.BORDER_REFLECT)
        up, down = self._noise(moved.shape)[int(self.rng.integers(NOISE_FIELDS))]
        return cv2.subtract(cv2.add(moved, up), down)

    def _noise(self, shape):
        """A few fields of sensor noise, as what it adds and what it takes away (saturating
        adds of uint8 are far cheaper than fresh noise for every frame)."""
        if self.fields is None:
            fields = self.rng.normal(0, NOISE, (NOISE_FIELDS, *shape)).round()
            self.fields = [(np.clip(f, 0, 255).astype(np.uint8),
                             np.clip(-f, 0, 255).astype(np.uint8)) for f in fields]
        return self.fields


def draw_arm(frame: np.ndarray, tip, base, width: float) -> None:
    """A skin-coloured arm from `base` (past the photo's edge) to a hand at `tip`, and its
    shadow."""
    tip, base = np.float32(tip), np.float32(base)
    shadow = frame.copy()
    offset = np.float32([width * 0.4, width * 0.3])
    cv2.line(shadow, tuple(int(v) for v in base + offset), tuple(int(v) for v in tip + offset),
             (0, 0, 0), int(width), cv2.LINE_AA)
    cv2.addWeighted(shadow, 0.25, frame, 0.75, 0, dst=frame)
    cv2.line(frame, tuple(int(v) for v in base), tuple(int(v) for v in tip), SKIN, int(width),
             cv2.LINE_AA)
    cv2.ellipse(frame, tuple(int(v) for v in tip), (int(width * 0.8), int(width * 0.6)), 0, 0, 360,
                (110, 150, 205), -1, cv2.LINE_AA)


def _cell_point(corners: np.ndarray, row: int, col: int) -> np.ndarray:
    to_image = cv2.getPerspectiveTransform(
        np.float32([[0, 0], [15, 0], [15, 15], [0, 15]]), np.float32(corners))
    return cv2.perspectiveTransform(np.float32([[[col + 0.5, row + 0.5]]]), to_image)[0, 0]


def _reach(scene: _Scene, corners, cell, side: int):
    """The hand's path to `cell` from the photo's bottom (side 0) or top (side 1) edge."""
    target = _cell_point(corners, *cell)
    width, height = scene.size
    base = np.float32([target[0] * 0.6 + width * 0.2, height + 40 if side == 0 else -40])
    arm = float(np.linalg.norm(corners[1] - corners[0])) / 15 * 1.4

    def coming(p):
        return base + (target - base) * p, base, arm

    def going(p):
        return coming(1 - p)
    return coming, going


def game_video(path: str, ruleset: Ruleset, *, seed: int, turns: int, players: int = 2,
               style: str = "erudit-black", size=(960, 720), fps: float = 8.0,
               settle: float = 2.0, hover_every: int = 2, lost_after: int | None = None,
               lost_for: float = 4.0, blind: str = "dark", knock=(0, 0)) -> GameVideo:
    """Film one synthetic game into `path` (MPEG-4 for an .mp4, else MJPG: an .avi). After
    each move the board stays still for `settle` + 2 s; before every `hover_every`-th move a
    hand hovers over the board and leaves without playing. With `lost_after` the camera loses
    the board for `lost_for` seconds after that move (`blind`: "dark", the light gone, or
    "away", the camera turned to the table) and comes back moved by `knock` pixels."""
    boards = random_game(ruleset, turns, seed=seed, pass_rate=0.0, star_rate=0.0)
    width, height = size
    codec = "mp4v" if str(path).lower().endswith(".mp4") else "MJPG"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*codec), fps, (width, height))
    scene = _Scene(writer, seed, style, size, fps)
    video = GameVideo(ruleset, players, path, fps, 0, boards, [], [])
    board = Board()
    scene.hold(board, settle + 1.0)
    try:
        for number, after in enumerate(boards, 1):
            _, corners = scene.render(board)
            new = sorted((r, c) for r, c, _ in after.placed_over(board))
            side = number % 2
            if hover_every and number % hover_every == 0:
                coming, going = _reach(scene, corners, new[0], side)
                scene.hold(board, REACH, coming)
                scene.hold(board, HOVER, lambda p, c=coming: c(1.0))
                scene.hold(board, REACH, going)
                scene.hold(board, settle + 1.0)
            for row, col in new:
                coming, going = _reach(scene, corners, (row, col), side)
                scene.hold(board, REACH, coming)
                scene.hold(board, LAY, lambda p, c=coming: c(1.0))
                board = board.copy()
                board.set(row, col, after[row, col])
                scene.hold(board, REACH, going)
                scene.hold(board, AWAY)
            video.laid.append(scene.time - AWAY)
            scene.hold(board, settle + 2.0)
            if lost_after == number:
                start = scene.time
                scene.blind = _blinds(width, height)[blind]
                scene.hold(board, lost_for)
                scene.blind, scene.offset = None, np.float32(knock)
                video.lost = (start, scene.time)
                scene.hold(board, settle + 1.0)
    finally:
        writer.release()
    game = true_game(ruleset, boards, players)
    video.frames = scene.frames
    video.scores = [t.score.total for t in game.turns]
    video.totals = game.totals
    return video


def _blinds(width: int, height: int):
    """What a camera that lost the board films instead."""
    def dark(frame):
        return (frame * 0.03).astype(np.uint8)

    def away(frame):
        table = cv2.resize(frame[:height // 8, :width // 8], (width, height))
        return cv2.GaussianBlur(table, (0, 0), 5)
    return {"dark": dark, "away": away}
