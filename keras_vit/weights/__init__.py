"""Checkpoint I/O: one entry point, `load_weights`, dispatching on what
`weights` names; `save_npz` exports the published layout."""
import os

from keras_vit.weights.errors import WeightsError, WeightsMismatchError
from keras_vit.weights.h5_format import load_h5
from keras_vit.weights.npz_format import load_npz, save_npz
from keras_vit.weights.presets import (
    PRESETS,
    download,
    get_preset,
    is_url,
    list_presets,
    preset_image_size,
)
from keras_vit.weights import preset_table  # noqa: F401  (registers the presets)


def resolve(weights, preset_family=None):
    """A local file path for `weights`: a preset tag of `preset_family`, a
    URL (downloaded once into the Keras cache) or a local path."""
    if not isinstance(weights, (str, os.PathLike)):
        raise WeightsError(
            f"weights must be None, a preset name, a URL or a file path; received {weights!r}"
        )
    preset = get_preset(preset_family, weights) if isinstance(weights, str) else None
    if preset is not None:
        return download(preset.url)
    if is_url(weights):
        return download(weights)
    path = os.fspath(weights)
    if not os.path.exists(path):
        known = list_presets(preset_family) if preset_family else []
        hint = f" Presets of {preset_family}: {', '.join(known)}." if known else ""
        raise WeightsError(
            f"weights={weights!r} is neither a preset{f' of {preset_family}' if preset_family else ''}, "
            f"a URL, nor an existing file.{hint}"
        )
    return path


def load_weights(model, weights, preset_family=None):
    """Loads `weights` (preset tag, URL, `.npz` or `.weights.h5` path) into
    `model`. Nothing is written to the model unless the whole file fits."""
    path = resolve(weights, preset_family)
    try:
        _load_file(model, path)
    except WeightsError as e:
        if not isinstance(e, WeightsMismatchError) and os.fspath(path) != os.fspath(weights):
            # A bad download must not stay in the cache to fail every later call.
            os.remove(path)
        raise
    return model


def _load_file(model, path):
    lower = path.lower()
    if lower.endswith(".npz"):
        load_npz(model, path)
    elif lower.endswith(".h5"):
        load_h5(model, path)
    else:
        raise WeightsError(
            f"cannot tell the format of {path!r}: expected a .npz checkpoint (ViT, AugReg, "
            "big_vision or BiT layout) or a keras_vit .weights.h5 file"
        )


__all__ = [
    "PRESETS",
    "WeightsError",
    "WeightsMismatchError",
    "list_presets",
    "load_weights",
    "preset_image_size",
    "resolve",
    "save_npz",
]
