"""This package's own `.weights.h5` files (written by `model.save_weights`).

Keras stores each layer's variables in a group whose `name` attribute is the
layer's name; that is enough to check a file against a model by name and
shape before Keras reads it, so a mismatched file changes nothing.
"""
import logging

import numpy as np

from keras_vit.layers import PositionEmbedding, PositionEmbedding2D, RelativePositionLogits
from keras_vit.weights.errors import WeightsError, WeightsMismatchError

logger = logging.getLogger("keras_vit")

RESIZING_LAYERS = (PositionEmbedding2D, RelativePositionLogits)


def _file_layers(path):
    import h5py

    try:
        f = h5py.File(path, "r")
    except (OSError, ValueError) as e:
        raise WeightsError(
            f"{path!r} is not a readable HDF5 weights file ({e}); it may be truncated: save or "
            "download it again"
        ) from None
    layers = {}
    with f:
        root = f.get("layers")
        if root is None:
            raise WeightsError(f"{path!r} is not a Keras .weights.h5 file (no 'layers' group)")
        for group in root.values():
            shapes = {}
            group.visititems(lambda n, obj: shapes.__setitem__(n, obj.shape) if hasattr(obj, "shape") else None)
            if shapes:
                vars_group = group.get("vars")
                name = vars_group.attrs.get("name") if vars_group is not None else None
                layers[name or group.name] = shapes
    return layers


def load_h5(model, path):
    found = _file_layers(path)
    expected = {layer.name: layer for layer in model.layers if layer.weights}
    missing = sorted(set(expected) - set(found))
    # A file's classifier layers are not needed by a model without them.
    unexpected = sorted(set(found) - set(expected) - {"head", "pre_logits"})
    mismatched, skip_head = [], False
    if "head" in expected and "pre_logits" in found and "pre_logits" not in expected:
        skip_head = True
        logger.warning(
            "Head not loaded from %s: it follows a pre_logits layer that the model does not have "
            "(representation_size=None); a new zero-initialized head is used.", path,
        )
    for name in set(expected) & set(found):
        layer = expected[name]
        file_shapes = found[name]
        if isinstance(layer, PositionEmbedding):
            posemb = [s for k, s in file_shapes.items() if k.endswith("vars/0")]
            if not posemb or posemb[0][-1] != layer.pos_embedding.shape[-1]:
                mismatched.append((name, layer.pos_embedding.shape, posemb[0] if posemb else ()))
            continue
        if isinstance(layer, RESIZING_LAYERS):
            continue
        # Position tables nested in a layer (relative attention) resize
        # themselves on load: compare everything else.
        resizing = [sub for sub in layer._flatten_layers(include_self=False) if isinstance(sub, RESIZING_LAYERS)]
        skip_ids = {id(w) for sub in resizing for w in sub.weights}
        want = sorted(tuple(w.shape) for w in layer.weights if id(w) not in skip_ids)
        have = sorted(tuple(s) for k, s in file_shapes.items()
                      if not any(f"{sub.name}/vars" in k for sub in resizing))
        if want != have:
            if name == "head":
                skip_head = True
                logger.warning(
                    "Head not loaded from %s: its shapes %s differ from the model's %s; a new "
                    "zero-initialized head is used.", path, have, want,
                )
            else:
                mismatched.append((name, want, have))
    if missing or unexpected or mismatched:
        raise WeightsMismatchError(path, missing, unexpected, mismatched)
    model.load_weights(path, skip_mismatch=skip_head or bool(set(found) - set(expected)))
    if skip_head:
        for w in model.get_layer("head").weights:
            w.assign(np.zeros(w.shape, w.dtype))
