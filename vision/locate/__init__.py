"""Find the printed 15×15 playing grid in a photo.

    >>> where = locate_board(load_photo("turn3.jpg"))        # or params=LocateParams(...)
    >>> where.corners.shape, round(where.cell_px)
    ((4, 2), 71)

A photo with no readable board raises PhotoError saying why (IllegibleBoard, with the grid's
Location, when the grid was found but its cells are too small or blurred).

The search runs on a copy shrunk to about `work_side` pixels (LocateParams; a large photo is
halved exactly first: cheap). A first guess comes from the line segments (two families through
their vanishing points, taken by direction and, as seen from a chair a family's lines turn too
far for one direction, by the two points most segments aim at; a comb of 16 equally spaced lines
fitted to each; then those of the place where most of them cross), looked for on a small copy
first and on larger ones only while unsure; when still unsure, outline candidates (board edges,
frames, the photo's own border), other pairs of segment directions, and the segments of each
place where many of them cross (a small board on striped wood or cloth; on the whole working
copy too, where a small board's lines show better) are tried too; the premium layout sizes a
guess from those whose comb missed the period. Each guess is moved by whole cells onto the grid
whose cell colours the premium layout (Эрудит or English, both symmetric) explains best (any
cell may show the tiles' colour: late in a game tiles hide most squares of some kinds), so a
printed margin or a row of tiles taken for a row of cells is caught, then refined against the
grid lines themselves (a homography through where each line really lies, fitted on the line
pieces between empty cells) on the smallest copy whose cells are large enough, so the corners
hold even where tiles, hands or a printed margin hide the outline. Where the lines are too faint
or blurred to snap to, the premium squares place the grid. Where no board is found (or only one
past the photo's edge that the layout does not confirm), the search looks again at the photo
with its lightness evened out locally: a dark board in the player's shadow or a dim room shows
its lines then.

The stages are modules: `segments` (line segments, vanishing points, where segments cross,
outlines), `lattice` (combs of 16 lines), `layout` (the premium layout's fit of a grid's cell
colours), `refine` (the grid snapped onto its lines) and `search` (the order they are tried in,
and when a fit is sure); `grid` holds the geometry they share and `params` the tuning values.
"""

from vision.locate.grid import cell_size, grid_homography, halve, order_corners, shrink_to
from vision.locate.params import LocateParams
from vision.locate.search import IllegibleBoard, Location, locate_board

__all__ = ["IllegibleBoard", "LocateParams", "Location", "cell_size", "grid_homography", "halve",
           "locate_board", "order_corners", "shrink_to"]
