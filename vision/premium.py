"""Read the premium kind of the empty cells of a rectified board from their colours.

    >>> rows = read_premiums(rectify(image, corners))
    >>> rows[0]
    'W..l...W...l..W'

Codes as in the layout files (engine/layouts): W ×3 word, w ×2 word, L ×3 letter, l ×2 letter,
`*` centre, `.` plain, and `?` for a cell marked occupied or that cannot be told.
Colours are compared relative to the board's own plain cells (the most common colour), which
cancels most of a warm or cool light; cells in doubt take the kind of the cells they map to under
the square's symmetries, as every premium layout is symmetric.
"""

import cv2
import numpy as np

from engine.ruleset import SIZE
from vision.rectify import CELL_PX

# Typical colour of each kind, as (ΔL, Δa, Δb) in Lab from the board's plain cells.
SCHEMES = {
    # Black plastic Эрудит: green ×2 letter, yellow ×3 letter, blue ×2 word, red ×3 word,
    # a white centre; cream-field Эрудит prints share the hues.
    "erudit": {
        ".": (0, 0, 0), "W": (20, 42, 18), "w": (28, -8, -38), "L": (55, -10, 60),
        "l": (25, -36, 14), "*": (62, -3, -3),
    },
    # English Scrabble: light blue ×2 letter, dark blue ×3 letter, pink ×2 word (and the centre),
    # red ×3 word, on a cream or taupe field.
    "scrabble": {
        ".": (0, 0, 0), "W": (-28, 48, 18), "w": (-6, 24, -6), "L": (-32, 4, -42),
        "l": (-6, -12, -24),
    },
}
LIGHTNESS_WEIGHT = 0.5  # lightness shifts with shading more than hue does
DOUBT_MARGIN = 6.0  # Lab units between the best two kinds below which a cell is in doubt
UNKNOWN_DISTANCE = 45.0  # Lab units from every kind: not a printed square (glare, a hand)
ORBIT_WEIGHT = 0.5  # weight of a cell's mirror images against its own colour
ADAPT_ROUNDS = 3  # rounds letting each kind's colour follow the photo's light


def read_premiums(rectified: np.ndarray, margin: float = 0.5, cell_px: int = CELL_PX,
                  occupied=None, scheme: str | None = None) -> list[str]:
    """15 strings of layout codes for the cells of `rectified` (see rectify()); cells marked in
    `occupied` (15×15 bools) read '?'. `scheme` is "erudit" or "scrabble", or None to infer."""
    colours = cell_colours(rectified, margin, cell_px)
    empty = np.ones((SIZE, SIZE), bool) if occupied is None else ~np.asarray(occupied, bool)
    plain = _plain_colour(colours[empty])
    relative = colours - plain
    if scheme is None:
        scheme = infer_scheme(colours, empty)
    kinds, doubtful = _classify(relative, empty, SCHEMES[scheme])
    kinds = _settle_doubts(kinds, doubtful, empty)
    if scheme == "scrabble" and kinds[SIZE // 2][SIZE // 2] == "w":
        kinds[SIZE // 2][SIZE // 2] = "*"  # the English centre is a ×2 word square with a star
    return ["".join(row) for row in kinds]


def cell_colours(rectified: np.ndarray, margin: float = 0.5, cell_px: int = CELL_PX) -> np.ndarray:
    """(15, 15, 3) Lab colour of each cell: the median over its middle, away from the lines and
    robust to the small printed ×2/×3."""
    lab = cv2.cvtColor(rectified.astype(np.float32) / 255, cv2.COLOR_BGR2LAB)
    start = int(round(margin * cell_px))
    grid = lab[start:start + SIZE * cell_px, start:start + SIZE * cell_px]
    inset = cell_px // 5
    cells = grid.reshape(SIZE, cell_px, SIZE, cell_px, 3)[:, inset:-inset, :, inset:-inset]
    cells = cells.transpose(0, 2, 1, 3, 4).reshape(SIZE, SIZE, -1, 3)
    return np.median(cells, axis=2)


def infer_scheme(colours: np.ndarray, empty: np.ndarray) -> str:
    """A dark field is Эрудит plastic; on a light field, green or yellow squares mean Эрудит and
    pink ones English Scrabble."""
    plain = _plain_colour(colours[empty])
    if plain[0] < 50:
        return "erudit"
    relative = colours[empty] - plain
    hue = np.degrees(np.arctan2(relative[:, 2], relative[:, 1])) % 360
    chroma = np.hypot(relative[:, 1], relative[:, 2])
    vivid = chroma > 20
    green_yellow = (vivid & (hue > 75) & (hue < 200)).sum()
    pink = (vivid & ((hue > 330) | (hue < 15)) & (relative[:, 0] > -15)).sum()
    return "erudit" if green_yellow > pink else "scrabble"


def _plain_colour(colours: np.ndarray) -> np.ndarray:
    """The colour most cells share: the median of the cells near the overall median."""
    centre = np.median(colours, axis=0)
    for _ in range(3):
        near = colours[np.linalg.norm(colours - centre, axis=1) < 12]
        if len(near) == 0:
            break
        centre = np.median(near, axis=0)
    return centre


def _classify(relative, empty, scheme):
    """Nearest kind per cell with the kinds' colours adapted to this photo; returns a 15×15
    list of codes ('?' where occupied or far from every kind) and a mask of doubtful cells."""
    names = list(scheme)
    protos = np.float32([scheme[name] for name in names])
    weight = np.float32([LIGHTNESS_WEIGHT, 1, 1])
    flat = relative[empty]
    barred = _barred(names)  # (15, 15, kind): '*' only marks the centre
    for _ in range(ADAPT_ROUNDS):
        distance = np.linalg.norm((flat[:, None] - protos[None]) * weight, axis=2) + barred[empty]
        nearest = distance.argmin(axis=1)
        for k in range(1, len(names)):  # the plain colour stays the reference
            members = flat[(nearest == k) & (distance[:, k] < UNKNOWN_DISTANCE)]
            if len(members):
                # move halfway so that one odd cell cannot drag a kind away
                protos[k] = 0.5 * protos[k] + 0.5 * np.median(members, axis=0)
    distance = np.linalg.norm((relative[..., None, :] - protos) * weight, axis=-1) + barred
    distance = _with_orbits(distance, empty)
    order = np.sort(distance, axis=-1)
    nearest = distance.argmin(axis=-1)
    kinds = [[names[nearest[r, c]] if empty[r, c] else "?" for c in range(SIZE)]
             for r in range(SIZE)]
    far = order[..., 0] > UNKNOWN_DISTANCE * (1 + ORBIT_WEIGHT)
    doubtful = (order[..., 1] - order[..., 0] < DOUBT_MARGIN) | far
    return kinds, doubtful & empty


def _barred(names):
    """(15, 15, kind) distance added to kinds a cell cannot have: the centre star marks only
    the centre, so a pale premium square elsewhere cannot drift towards it."""
    barred = np.zeros((SIZE, SIZE, len(names)), np.float32)
    if "*" in names:
        barred[..., names.index("*")] = 10 * UNKNOWN_DISTANCE
        barred[SIZE // 2, SIZE // 2, names.index("*")] = 0
    return barred


def _with_orbits(distance, empty):
    """Add ORBIT_WEIGHT × the mean distance of the other empty cells of each cell's symmetry
    orbit, so glare on one square is outvoted by its 7 mirror images, while a clear colour
    still decides for itself."""
    pooled = distance.copy()
    for r in range(SIZE):
        for c in range(SIZE):
            others = [(rr, cc) for rr, cc in _orbit(r, c) if empty[rr, cc]]
            if others:
                rows, cols = zip(*others, strict=True)
                pooled[r, c] += ORBIT_WEIGHT * distance[list(rows), list(cols)].mean(axis=0)
    return pooled


def _settle_doubts(kinds, doubtful, empty):
    """A doubtful cell takes the kind most sure cells of its symmetry orbit show, else '?'."""
    settled = [row[:] for row in kinds]
    for r in range(SIZE):
        for c in range(SIZE):
            if not doubtful[r, c]:
                continue
            votes = {}
            for rr, cc in _orbit(r, c):
                if empty[rr, cc] and not doubtful[rr, cc]:
                    votes[kinds[rr][cc]] = votes.get(kinds[rr][cc], 0) + 1
            settled[r][c] = max(votes, key=votes.get) if votes else "?"
    return settled


def _orbit(r, c):
    last = SIZE - 1
    points = {(r, c), (c, r), (last - r, c), (r, last - c), (last - r, last - c),
              (last - c, r), (c, last - r), (last - c, last - r)}
    points.discard((r, c))
    return points
