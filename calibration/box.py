"""A calibrated box: its layout and square colours, and reference embeddings of its empty
cells and of its letters, used to correct the general classifier's readings of this box.

    >>> box = load_profile("kitchen", data_dir)
    >>> reading = read_board(image, ruleset=box.apply_to(ruleset), profile=box)
"""

from __future__ import annotations

import json
import os
import sys
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

from calibration.references import (
    embedding_width,
    empty_references,
    letter_references,
    model_hash,
)
from engine.board import COLUMNS
from engine.errors import ProfileError
from engine.ruleset import SIZE, Layout, Ruleset
from vision.cells import cut_cells
from vision.classifier import EMPTY, glyph_of, normalised
from vision.squares import SquareLooks

SHRINK = 0.6  # share of the references' covariance replaced by its mean variance
GENERAL_WEIGHT = 1.0  # weight of the general model's log-probabilities against the references'
# the discriminant's scores divided by this are the references' log-odds: fitted to one
# photo of each letter, its raw scores claim hundreds of nats where a casual photo shows less
TEMPERATURE = 20.0
# in judging a photo's upright the box's own letters count most: an unseen font on small,
# blurred tiles can look more upright turned to the general model, whose sum then outweighs
# the tempered votes (a novel box's board was read turned at weight 1; 96/96 right at 0.25)
UPRIGHT_GENERAL_WEIGHT = 0.25
SETTLED = 0.9  # tiles read at least this surely show how a photo moves its tiles' looks
MIN_SETTLED = 5  # fewer such tiles tell nothing about the photo
KEPT = 2.0  # a letter's references weigh as much as this many of the photo's sure tiles of it
ELSEWHERE = 1e-4  # the references' share for glyphs they have no example of
# a cell farther (squared Mahalanobis) from every class than this × the references' own
# farthest 1% from their class is unlike anything the box's photos showed: the references
# then give no verdict and the general model reads it (a shadow, a blurred or hidden tile)
REACH = 2.5
REACH_QUANTILE = 0.99
# a photo in which more than this share of the tiles is beyond every class's reach (a far,
# blurred board) is read by the general model alone: the photo's tile shift would carry its
# cells into the references' reach, where their verdict on such tiles is worse than none
# (novel boxes 11-14: that share 0.75-0.84 on the one far, motion-blurred board, at most 0.28
# on the others)
UNLIKE_PHOTO = 0.5
FORMAT = 1


class Discriminant:
    """A linear discriminant of the references' classes: their means (C, D), the glyph each
    shows (C,), the precision (inverse covariance) they share, and `reach`: the squared
    Mahalanobis distance from a class beyond which a cell is none of them."""

    def __init__(self, precision: np.ndarray, means: np.ndarray, owners: np.ndarray,
                 reach: float):
        self.precision, self.means, self.owners, self.reach = precision, means, owners, reach
        self.weights = means @ precision
        self.bias = -0.5 * np.einsum("ij,ij->i", self.weights, means)

    def scores(self, embeddings: np.ndarray) -> np.ndarray:
        return embeddings @ self.weights.T + self.bias

    def outside(self, embeddings: np.ndarray) -> np.ndarray:
        """(N,) the score (as `scores`) of a class `reach` away from each cell."""
        return 0.5 * (self.distances(embeddings) - self.reach)

    def beyond_reach(self, embeddings: np.ndarray) -> np.ndarray:
        """(N,) whether each cell is farther than `reach` from every class (a class's squared
        distance is the cell's own length less twice its score)."""
        nearest = self.distances(embeddings) - 2 * self.scores(embeddings).max(axis=1)
        return nearest > self.reach

    def distances(self, vectors: np.ndarray) -> np.ndarray:
        """(N,) squared Mahalanobis length of each vector."""
        return ((vectors @ self.precision) * vectors).sum(axis=1)

    def sure(self, embeddings, reading, glyphs) -> tuple[np.ndarray, np.ndarray]:
        """Cells surely read as what their nearest references' class shows (an empty square
        of a kind, a letter or the star), and that class for each cell."""
        nearest = self.scores(embeddings).argmax(axis=1)
        read = np.array(glyphs)[reading.argmax(axis=1)]
        sure = (reading.max(axis=1) > np.log(SETTLED)) & (read == self.owners[nearest])
        return sure, nearest

    def moved(self, embeddings: np.ndarray, classes: np.ndarray) -> Discriminant:
        """The discriminant with each class's mean moved towards the given cells of it, as
        if they were KEPT references of their own."""
        means = self.means.copy()
        for c in np.unique(classes):
            cells = embeddings[classes == c]
            means[c] = (KEPT * means[c] + cells.sum(axis=0)) / (KEPT + len(cells))
        return Discriminant(self.precision, means, self.owners, self.reach)

    def reaching(self, reach: float) -> Discriminant:
        return Discriminant(self.precision, self.means, self.owners, reach)


@dataclass
class View:
    """A calibration photo's top-down view at the crops' scale, and the quarter turns that
    put its board upright: what a later model needs to make its own references."""

    board: np.ndarray
    turns: int = 0


@dataclass
class Profile:
    """One box. `refs` are L2-normalised embeddings of its cells, `ref_classes` what each shows."""

    name: str
    ruleset: str
    model: str
    layout: list[str]  # 15 rows as read from the empty board ('?' where it could not be told)
    colours: dict  # layout code -> {"bgr": [b, g, r], "lab": [L, a, b], "cells": n}
    differences: list[dict]  # [{"cell": "F6", "box": "L", "ruleset": "."}]
    refs: np.ndarray = field(repr=False)
    ref_classes: np.ndarray = field(repr=False)  # glyph, or '.' + layout code for empty cells
    letters: list[str] = field(default_factory=list)  # glyphs with letter/star references
    empty_view: View | None = field(default=None, repr=False)
    alphabet_view: View | None = field(default=None, repr=False)
    warned: bool = field(default=False, repr=False)
    _fitted: Discriminant | None = field(default=None, repr=False)
    _squares: SquareLooks | None = field(default=None, repr=False)

    @property
    def ref_glyphs(self) -> np.ndarray:
        return np.array([c[0] for c in self.ref_classes])

    # -- reading -------------------------------------------------------------------------
    def adjust(self, log_probs: np.ndarray, embeddings: np.ndarray, glyphs) -> np.ndarray:
        """(N, G) glyph log-probabilities of one photo's cells corrected with the box's
        references: a product of the general model (weighted) and the references' own
        verdict. The photo's surely read tiles then show how its light and focus move every
        tile's look, its sure cells how each of their letters and squares looks in it, and
        the cells are read again.
        A profile without an alphabet photo leaves the general model's reading as it is."""
        if not self.letters:  # empty cells alone do not tell an unseen tile from a square
            return log_probs
        glyphs = list(glyphs)
        embeddings = normalised(embeddings)
        fitted = self._discriminant()
        if self._unlike(log_probs, embeddings, glyphs, fitted):
            return log_probs
        # how far the photo moved its tiles' looks is told by all of them, however far
        unbounded = fitted.reaching(np.inf)
        reading = self._combined(log_probs, embeddings, glyphs, unbounded)
        sure, nearest = unbounded.sure(embeddings, reading, glyphs)
        tiles = sure & (fitted.owners[nearest] != EMPTY)
        if tiles.sum() < MIN_SETTLED:
            return self._combined(log_probs, embeddings, glyphs, fitted)
        # the tiles' move, not the squares': each cell moved as far as it is a tile
        tile = 1 - np.exp(reading[:, glyphs.index(EMPTY)])
        shift = (embeddings[tiles] - fitted.means[nearest[tiles]]).mean(axis=0)
        embeddings = embeddings - tile[:, None] * shift
        reading = self._combined(log_probs, embeddings, glyphs, fitted)
        sure, nearest = fitted.sure(embeddings, reading, glyphs)
        return self._combined(log_probs, embeddings, glyphs,
                              fitted.moved(embeddings[sure], nearest[sure]))

    @staticmethod
    def _unlike(log_probs, embeddings, glyphs, fitted: Discriminant) -> bool:
        """Whether most of the photo's tiles (as the general model sees them) are beyond
        the references' reach."""
        tiles = np.exp(log_probs[:, glyphs.index(EMPTY)]) < 0.5
        if tiles.sum() < MIN_SETTLED:
            return False
        return float(fitted.beyond_reach(embeddings[tiles]).mean()) > UNLIKE_PHOTO

    def judge(self, log_probs: np.ndarray, embeddings: np.ndarray, glyphs) -> np.ndarray:
        """(N, G) general log-probabilities (weighted by UPRIGHT_GENERAL_WEIGHT) plus the
        references' votes, not normalised: how well each glyph explains each crop, to compare
        the same tiles read in other turns (vision.read.profile_turns)."""
        return (UPRIGHT_GENERAL_WEIGHT * np.asarray(log_probs, np.float32)
                + self.votes(normalised(embeddings), list(glyphs)))

    def _combined(self, log_probs, embeddings, glyphs, fitted) -> np.ndarray:
        """The general model (weighted) times the references' verdict, normalised."""
        combined = (GENERAL_WEIGHT * np.asarray(log_probs, np.float32)
                    + self.votes(embeddings, glyphs, fitted))
        combined -= combined.max(axis=1, keepdims=True)
        return combined - np.log(np.exp(combined).sum(axis=1, keepdims=True))

    def votes(self, embeddings: np.ndarray, glyphs: list[str],
              fitted: Discriminant | None = None) -> np.ndarray:
        """(N, G) log-probabilities of each glyph by the references alone: a linear
        discriminant fitted to them (each kind of empty square a class of its own), with
        a share for "none of them" spread evenly over the glyphs they show."""
        fitted = fitted or self._discriminant()
        scores = fitted.scores(embeddings) / TEMPERATURE
        votes = np.full((len(embeddings), len(glyphs)), -np.inf, np.float32)
        for glyph in set(fitted.owners):
            column = glyphs.index(glyph)
            votes[:, column] = np.logaddexp.reduce(scores[:, fitted.owners == glyph], axis=1)
        known = np.isfinite(votes[0])
        none = fitted.outside(embeddings) / TEMPERATURE - np.log(known.sum())
        votes[:, known] = np.logaddexp(votes[:, known], none[:, None])
        votes[:, known] -= np.logaddexp.reduce(votes[:, known], axis=1, keepdims=True)
        # glyphs the box has no example of: far less likely than its likeliest letter
        votes[:, ~known] = votes[:, known].max(axis=1, keepdims=True) + np.log(ELSEWHERE)
        return votes

    def _discriminant(self) -> Discriminant:
        """Class means and a shared, shrunk covariance of the references."""
        if self._fitted is None:
            classes = sorted(set(self.ref_classes))
            index = {c: i for i, c in enumerate(classes)}
            members = np.array([index[c] for c in self.ref_classes])
            means = np.array([self.refs[members == i].mean(axis=0) for i in range(len(classes))])
            spread = self.refs - means[members]
            cov = spread.T @ spread / len(self.refs)
            cov = (1 - SHRINK) * cov + SHRINK * np.trace(cov) / len(cov) * np.eye(len(cov))
            precision = np.linalg.inv(cov).astype(np.float32)
            fitted = Discriminant(precision, means.astype(np.float32),
                                  np.array([c[0] for c in classes]), 0.0)
            fitted.reach = REACH * float(np.quantile(fitted.distances(spread), REACH_QUANTILE))
            self._fitted = fitted
        return self._fitted

    @property
    def squares(self) -> SquareLooks | None:
        """Each square's look in the empty-board photo (None for a profile that keeps no
        view): a photo's cells are weighed against them."""
        if self.empty_view is None:
            return None
        if self._squares is None:
            self._squares = SquareLooks.of_empty_board(self.empty_view.board)
        return self._squares

    @property
    def classes(self) -> list[str]:
        """The glyphs the references show: empty, then the letters and the star."""
        return [EMPTY, *self.letters]

    # -- rules ---------------------------------------------------------------------------
    def apply_to(self, ruleset: Ruleset) -> Ruleset:
        """The ruleset with this box's layout where the two differ (said once on stderr)."""
        missing = [ch for ch in ruleset.alphabet
                   if self.letters and glyph_of(ch) not in self.letters]
        if missing:
            raise ProfileError(f"profile {self.name} was made for ruleset {self.ruleset}; its "
                               f"letters lack {''.join(missing[:10])} of ruleset {ruleset.name}")
        rows = tuple("".join(box if box != "?" else rule for box, rule in zip(mine, theirs,
                                                                              strict=True))
                     for mine, theirs in zip(self.layout, ruleset.layout.rows, strict=True))
        if rows == ruleset.layout.rows:
            return ruleset
        if not self.warned:
            cells = [f"{COLUMNS[c]}{r + 1}" for r in range(15) for c in range(15)
                     if rows[r][c] != ruleset.layout.rows[r][c]]
            print(f"erudit: profile {self.name}: the box's layout differs from ruleset "
                  f"{ruleset.name}'s at {', '.join(cells[:12])}; using the box's layout",
                  file=sys.stderr)
            self.warned = True
        layout = Layout(name=f"{ruleset.layout.name}+{self.name}", rows=rows,
                        centre=ruleset.layout.centre)
        return ruleset.with_layout(layout)

    def summary(self) -> list[str]:
        """Lines telling the player what was calibrated."""
        lines = [f"profile {self.name} (ruleset {self.ruleset}, model {self.model})"]
        lines.append("layout read from the empty board:")
        lines += [f"  {row}" for row in self.layout]
        if self.differences:
            cells = ", ".join(f"{d['cell']} {d['box']} (ruleset {d['ruleset']})"
                              for d in self.differences)
            lines.append(f"differs from ruleset {self.ruleset} at {len(self.differences)} "
                         f"cells: {cells}")
        else:
            lines.append(f"layout matches ruleset {self.ruleset}")
        colours = ", ".join(f"{code} #{hex_colour(c['bgr'])}" for code, c in self.colours.items())
        lines.append(f"square colours: {colours}")
        letters = ("".join(self.letters) if self.letters
                   else "none (no alphabet photo): letters are read by the general model")
        lines.append(f"letter references: {letters}")
        return lines

    # -- files ---------------------------------------------------------------------------
    def meta(self) -> dict:
        """profile.json's content, but for the kept views' turns."""
        return {"format": FORMAT, "name": self.name, "ruleset": self.ruleset,
                "model": self.model, "layout": self.layout, "colours": self.colours,
                "differences": self.differences, "letters": self.letters}

    def save(self, folder: Path) -> None:
        """Write the profile's files, each whole or not at all (a rebuild may be cut short)."""
        folder.mkdir(parents=True, exist_ok=True)
        meta = self.meta()
        for name, view in ((EMPTY_VIEW, self.empty_view), (ALPHABET_VIEW, self.alphabet_view)):
            if view is not None:
                _replace(folder / name, lambda path, v=view: _write_png(path, v.board))
                meta[_turns_key(name)] = view.turns
        _replace(folder / "refs.npz", lambda path: np.savez_compressed(
            path, refs=self.refs.astype(np.float16), classes=np.array(self.ref_classes, "U2")))
        _replace(folder / "profile.json", lambda path: path.write_text(
            json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8"))
        # a box calibrated again without an alphabet photo keeps none of the one before
        for name, view in ((EMPTY_VIEW, self.empty_view), (ALPHABET_VIEW, self.alphabet_view)):
            if view is None:
                (folder / name).unlink(missing_ok=True)

    @property
    def keeps_views(self) -> bool:
        """Whether the profile keeps the calibration views its references come from
        (profiles made before they were kept do not)."""
        return self.empty_view is not None and (not self.letters or self.alphabet_view is not None)

    def rebuilt(self) -> Profile:
        """This profile with references made again by the loaded model from the views it
        keeps (ValueError when they do not give the references it lists)."""
        refs = [empty_references(cut_cells(self.empty_view.board))]
        if self.letters:
            view = self.alphabet_view
            refs.append(letter_references(view.board, view.turns, len(self.letters))[1])
        refs = np.concatenate(refs)
        if len(refs) != len(self.ref_classes):
            raise ValueError(f"its calibration photos give {len(refs)} references, "
                             f"it lists {len(self.ref_classes)}")
        return replace(self, model=model_hash(), refs=normalised(refs), _fitted=None)


EMPTY_VIEW, ALPHABET_VIEW = "empty.png", "alphabet.png"


def _write_png(path: Path, image: np.ndarray) -> None:
    if not cv2.imwrite(str(path), image, [cv2.IMWRITE_PNG_COMPRESSION, 6]):
        raise OSError(f"cannot write {path}")


def _replace(path: Path, write) -> None:
    """write(temporary path), then move it over `path` in one step."""
    part = path.with_name(f".{path.stem}.part{path.suffix}")
    write(part)
    os.replace(part, path)


def hex_colour(bgr) -> str:
    """The hex digits (rrggbb) of a BGR colour."""
    b, g, r = (int(round(x)) for x in bgr)
    return f"{r:02x}{g:02x}{b:02x}"


def load_box(folder: Path, name: str) -> Profile:
    """Read a profile folder; ProfileError when it is missing, corrupt, or of another model."""
    if not (folder / "profile.json").is_file():
        raise ProfileError(code="unknown_profile", name=name, folder=folder)
    try:
        meta = json.loads((folder / "profile.json").read_text("utf-8"))
        if meta.get("format") != FORMAT:
            raise ValueError(f"format {meta.get('format')!r}, this version reads {FORMAT}")
        refs, classes = _references(folder / "refs.npz")
        profile = Profile(name=meta["name"], ruleset=meta["ruleset"], model=meta["model"],
                          layout=list(meta["layout"]), colours=meta["colours"],
                          differences=meta["differences"], refs=normalised(refs),
                          ref_classes=classes, letters=list(meta["letters"]),
                          empty_view=_view(folder, EMPTY_VIEW, meta),
                          alphabet_view=_view(folder, ALPHABET_VIEW, meta))
        _check_shape(profile)
        if profile.model == model_hash():
            _check_width(profile)
            return profile
        if not profile.keeps_views:
            raise ProfileError(f"profile {name} was made with another model and keeps no "
                               "calibration photos; run erudit calibrate again")
        profile = profile.rebuilt()
        profile.save(folder)
    except KeyError as exc:
        raise ProfileError(f"profile {name!r} in {folder} is corrupt (profile.json lacks "
                           f"{exc.args[0]!r}); run erudit calibrate again") from None
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise ProfileError(f"profile {name!r} in {folder} is corrupt ({exc}); "
                           "run erudit calibrate again") from None
    print(f"erudit: profile {name} was made with another model; its references were "
          "made again from its calibration photos", file=sys.stderr)
    return profile


def _references(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """refs.npz's reference embeddings and their classes (ValueError when it is damaged)."""
    try:
        with np.load(path) as data:
            return data["refs"].astype(np.float32), data["classes"].astype(str)
    except (zipfile.BadZipFile, EOFError, KeyError) as exc:
        raise ValueError(f"{path.name} is damaged ({exc})") from None


def _view(folder: Path, name: str, meta: dict) -> View | None:
    """A kept calibration view, or None when the profile keeps none (older profiles)."""
    if not (folder / name).is_file():
        return None
    board = cv2.imread(str(folder / name), cv2.IMREAD_COLOR)
    if board is None:
        raise ValueError(f"{name} is not an image")
    return View(board, int(meta.get(_turns_key(name), 0)) % 4)


def _turns_key(view_file: str) -> str:
    """profile.json's key for the upright turn of a kept view ("alphabet_turns")."""
    return f"{Path(view_file).stem}_turns"


def check_layout(layout: list[str]) -> None:
    """ValueError unless a profile's layout is 15 rows of 15 codes."""
    if len(layout) != SIZE or any(len(row) != SIZE for row in layout):
        raise ValueError("layout is not 15 rows of 15")


def _check_shape(profile: Profile) -> None:
    check_layout(profile.layout)
    if profile.refs.ndim != 2 or len(profile.refs) != len(profile.ref_classes):
        raise ValueError("references and their glyphs differ in number")
    if not np.isfinite(profile.refs).all():
        raise ValueError("references hold non-numbers")
    missing = [g for g in profile.classes if g not in set(profile.ref_glyphs)]
    if missing:
        raise ValueError(f"no references of {''.join(missing)}")


def _check_width(profile: Profile) -> None:
    """References of this very model hold as many numbers as its embeddings."""
    if profile.refs.shape[1] != embedding_width():
        raise ValueError(f"references of {profile.refs.shape[1]} numbers, the model's "
                         f"have {embedding_width()}")
