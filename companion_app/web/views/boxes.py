"""The box setup page: teach the app one particular box from two photos, as `erudit calibrate`
does, and see the boxes it knows. A game then names its box on the home page."""

from __future__ import annotations

import tempfile
from pathlib import Path

from flask import Blueprint, current_app, jsonify, redirect, render_template, request, url_for

from engine.errors import EruditError, PhotoError, ProfileError
from engine.ruleset import PREMIUM_NAMES

from .. import reading
from ..answer import BadInput, Conflict, status_of, wants_json
from ..game_page import data_dir
from ..i18n import translate_error
from ..state import layout_grid
from ..uploads import TEMP_PREFIX, check_free, check_header
from .home import installed_ruleset, ruleset_choices

bp = Blueprint("boxes", __name__)

PHOTOS = ("empty", "alphabet")  # the form's photo fields
SQUARES = {".": "plain square", "*": "centre", **PREMIUM_NAMES}  # layout code: its name


@bp.get("/boxes")
def index():
    if wants_json():
        return jsonify({"boxes": _boxes()})
    return _page()


@bp.post("/boxes")
def calibrate():
    try:
        box = _calibrated(request.form, request.files)
    except EruditError as exc:
        if wants_json():
            raise
        return _page(error=translate_error(exc)), status_of(exc)
    if wants_json():
        return jsonify(box), 201
    return redirect(url_for("boxes.index") + f"#box-{box['name']}", code=303)


def _calibrated(form, files) -> dict:
    """Check the form, build and save the profile, and describe it."""
    from calibration.build import box_name, check_name
    from calibration.profile import describe, profile_folder

    name = box_name(form.get("name", ""))
    check_name(name)
    ruleset = installed_ruleset(form.get("ruleset", "erudit"))
    replace = form.get("replace") in ("1", "on", "true")
    if profile_folder(name, data_dir()).exists() and not replace:
        raise Conflict(code="box_exists", name=name)
    sent = {field: files[field] for field in PHOTOS if files.get(field) and files[field].filename}
    if "empty" not in sent:
        raise BadInput("no photo of the empty board (field 'empty')")
    check_free(data_dir(), current_app.config)
    with tempfile.TemporaryDirectory(dir=data_dir(), prefix=TEMP_PREFIX) as folder:
        paths = {field: _saved(upload, field, Path(folder)) for field, upload in sent.items()}
        try:  # decoding and reading two photos: in the slow lane's worker, off this thread
            meta = reading.run_job(current_app.config, "heavy", ("boxes", name), calibrate_box,
                                   str(paths["empty"]), _str(paths.get("alphabet")), name,
                                   ruleset, str(data_dir()))
        except (ProfileError, PhotoError) as exc:  # name the photos as the player sent them
            names = {str(path): _sent_name(sent[field]) for field, path in paths.items()}
            raise _renamed(exc, names) from None
    return describe(meta)


def _renamed(exc: ProfileError | PhotoError, names: dict) -> EruditError:
    """`exc` with the server's paths of the photos replaced by the names they were sent under."""
    if exc.message is None:
        text = str(exc)
        for path, sent in names.items():
            text = text.replace(path, sent)
        return type(exc)(text)
    params = {key: names.get(str(value), value) for key, value in exc.message.params.items()}
    return type(exc)(code=exc.message.code, **params)


def calibrate_box(empty: str, alphabet: str | None, name: str, ruleset: str,
                  data: str) -> dict:
    """build_profile in a worker process; the profile's description (plain data) back."""
    from calibration.profile import build_profile

    return build_profile(empty, alphabet, name, ruleset, data).meta()


def _str(path: Path | None) -> str | None:
    return str(path) if path is not None else None


def _saved(upload, field: str, folder: Path) -> Path:
    """The uploaded photo written to `folder`, once its header shows a sane image."""
    data = upload.read()
    try:
        ext = check_header(data)
    except PhotoError as exc:
        raise type(exc)(code=f"{field}_photo_refused", name=_sent_name(upload),
                        error=exc) from None
    path = folder / f"{field}.{ext}"
    path.write_bytes(data)
    return path


def _sent_name(upload) -> str:
    return Path(upload.filename or "photo").name


def _boxes() -> list[dict]:
    from calibration.profile import saved_profiles

    return saved_profiles(data_dir())


def _page(error: str | None = None):
    boxes = [{**box, "grid": layout_grid(box["layout"], [d["cell"] for d in box["differences"]])}
             if "layout" in box else box for box in _boxes()]
    return render_template("boxes.html", boxes=boxes, rulesets=ruleset_choices(), error=error,
                           squares=SQUARES)
