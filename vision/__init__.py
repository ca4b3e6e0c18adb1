"""Reading a board from a photo: find the printed grid, then read every cell.

    >>> from vision import read_photo
    >>> reading = read_photo("turn3.jpg", ruleset="erudit")
    >>> reading.board, reading.corners, reading.uncertain

`locate_board(image)` finds the grid (a `Location`: its corners in the photo) or raises a
`PhotoError` saying why not; `read_board(image)` / `read_grid(image, location)` read the cells
of a loaded photo; `load_photo` opens a photo file with one clear error for a bad one;
`rectify` warps the grid to a top-down view; `check_readable(ruleset)` refuses, in one line
naming them, a ruleset with letters the tile reader's network has no class for.
"""

from vision.classifier import check_readable
from vision.locate import IllegibleBoard, Location, locate_board
from vision.photo import load_photo
from vision.read import Reading, read_board, read_grid, read_photo
from vision.rectify import rectify

__all__ = ["IllegibleBoard", "Location", "Reading", "check_readable", "load_photo", "locate_board",
           "read_board", "read_grid", "read_photo", "rectify"]
