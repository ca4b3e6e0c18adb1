"""Open a photo as the camera meant it to be seen.

    >>> image = load_photo("game/turn3.jpg")   # BGR uint8, EXIF orientation applied
    >>> image.shape[2]
    3
"""

import os

import cv2
import numpy as np

from engine.errors import PhotoError

REDUCED_DECODES = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2,
                   4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}


def load_photo(path, reduce: int = 1) -> np.ndarray:
    """Decode `path` to a BGR uint8 image, turned upright as its EXIF orientation says.

    cv2.imread applies the EXIF orientation tag itself (checked on a photo stored sideways with
    orientation 6, also for the reduced decodes), so the pixels come back as the photo is
    displayed. `reduce` 2, 4 or 8 decodes a JPEG at 1/2, 1/4 or 1/8 of its size, about twice as
    fast as a full decode at 1/2: enough for a 12 MP photo whose cells span 100+ pixels.
    """
    if reduce not in REDUCED_DECODES:
        raise ValueError(f"reduce must be one of {sorted(REDUCED_DECODES)}, not {reduce!r}")
    name = os.fspath(path)
    if not os.path.isfile(name):
        raise PhotoError(f"{name}: cannot open (no such file)")
    try:
        image = cv2.imread(name, REDUCED_DECODES[reduce])
    except cv2.error as exc:  # a corrupt header can raise instead of returning None
        raise PhotoError(f"{name}: not an image ({exc.msg.strip()})") from None
    if image is None:
        if not os.access(name, os.R_OK):
            raise PhotoError(f"{name}: cannot open (permission denied)")
        raise PhotoError(f"{name}: not an image")
    return image


# A photo whose half-size decode still has this long side is read at half size: its board
# cells stay far above the 32 px the reader works at, and decoding and finding cost half.
HALF_SIZE_FROM = 2000


def load_for_reading(path) -> tuple[np.ndarray, float]:
    """Decode a photo at the size reading needs — half size for 12 MP and larger photos — and
    the factor from its pixels back to the photo's own."""
    half = load_photo(path, reduce=2)
    if max(half.shape[:2]) >= HALF_SIZE_FROM:
        return half, 2.0
    return load_photo(path), 1.0
