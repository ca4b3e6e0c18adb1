"""The project's own small error hierarchy; the CLI and the web app turn these into one line."""


class EruditError(Exception):
    """Base of every error a user can cause (bad file, bad photo, impossible move)."""


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
