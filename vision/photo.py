"""Open a photo as the camera meant it to be seen.

    >>> image = load_photo("game/turn3.jpg")   # BGR uint8, EXIF orientation applied
    >>> image.shape[2]
    3
"""

import os

import cv2
import numpy as np

from engine.errors import PhotoError


def load_photo(path) -> np.ndarray:
    """Decode `path` to a BGR uint8 image, turned upright as its EXIF orientation says.

    cv2.imread with IMREAD_COLOR applies the EXIF orientation tag itself (checked on a photo
    stored sideways with orientation 6), so the pixels come back as the photo is displayed.
    """
    name = os.fspath(path)
    if not os.path.isfile(name):
        raise PhotoError(f"{name}: cannot open (no such file)")
    try:
        image = cv2.imread(name, cv2.IMREAD_COLOR)
    except cv2.error as exc:  # a corrupt header can raise instead of returning None
        raise PhotoError(f"{name}: not an image ({exc.msg.strip()})") from None
    if image is None:
        if not os.access(name, os.R_OK):
            raise PhotoError(f"{name}: cannot open (permission denied)")
        raise PhotoError(f"{name}: not an image")
    return image
