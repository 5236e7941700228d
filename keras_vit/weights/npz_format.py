"""Loading and exporting the published `.npz` layouts (original ViT and
hybrids, AugReg, big_vision, BiT) through one validation plan."""
import logging
import os

import keras
import numpy as np

from keras_vit.layers.posemb_resize import infer_square_grid
from keras_vit.weights import big_vision_format
from keras_vit.weights.errors import WeightsMismatchError
from keras_vit.weights.npz_reader import Entry, NpzCheckpoint
from keras_vit.weights.targets import model_family, model_targets

logger = logging.getLogger("keras_vit")

_TOP_GROUPS = ("head", "pre_logits")


def _group(key):
    """'head' / 'pre_logits' for the classifier keys of either family."""
    if key.startswith(("head/", "resnet/head/")):
        return "head"
    if key.startswith("pre_logits/"):
        return "pre_logits"
    return None


def _squeezed(shape):
    shape = tuple(shape)
    while len(shape) > 1 and shape[0] == 1:
        shape = shape[1:]
    return shape


def _posemb_fits(target, found):
    layer = target.layer
    if len(found) != 3 or found[0] != 1 or found[2] != target.shape[2]:
        return False
    grid_tokens = found[1] - layer.num_prefix_tokens
    return found[1] == target.shape[1] or (grid_tokens > 0 and infer_square_grid(grid_tokens) is not None)


def load_npz(model, path):
    """Loads a published-layout `.npz` into `model`; validates everything
    before the first variable is written."""
    ckpt = NpzCheckpoint(path)
    try:
        entries = ckpt.entries
        if big_vision_format.is_big_vision(entries):
            entries = big_vision_format.to_vit_layout(entries)
        _assign(model, entries, path, verify=ckpt.verify)
    finally:
        ckpt.close()


def _assign(model, entries, source, verify=None):
    targets = model_targets(model)
    family = model_family(model)
    model_groups = {g for g in map(_group, targets) if g}
    file_groups = {g for g in map(_group, entries) if g}
    missing, mismatched, hints = [], [], []
    skip = set()
    if "head" in model_groups:
        reason = _head_skip_reason(targets, entries, model_groups, file_groups)
        if reason:
            skip.add("head")
            logger.warning("Head not loaded from %s: %s; a new zero-initialized head is used.", source, reason)
    plan = []
    for key, target in targets.items():
        if _group(key) in skip:
            continue
        if key not in entries:
            missing.append(key)
            continue
        found = entries[key].shape
        if target.layer is not None:
            ok = _posemb_fits(target, found)
        else:
            ok = _squeezed(found) == _squeezed(target.shape)
        if not ok:
            mismatched.append((key, target.file_shape, found))
        elif target.layer is not None and found[1] != target.shape[1]:
            # Resized now, so a grid that cannot be resized fails before any write.
            resized = target.layer.resized(entries[key].load(), None)
            plan.append((target, Entry(resized.shape, lambda v=resized: v)))
        else:
            plan.append((target, entries[key]))
    unexpected = [k for k in entries if k not in targets and not (_group(k) and _group(k) not in model_groups)]
    if "cls" in missing:
        hints.append("the file is a 'gap' model (no class token): build with pooling='gap'")
    if "cls" in unexpected:
        hints.append("the file has a class token: build with pooling='token'")
    if "pre_logits" in model_groups and "pre_logits" not in file_groups:
        hints.append("the file has no pre_logits layer: build with representation_size=None")
    if family == "vit" and any(k.startswith("resnet/") for k in entries):
        hints.append("this is a BiT checkpoint: use a BiT_* builder or ResNetV2")
    if family == "bit" and any(k.startswith("Transformer/") for k in entries):
        hints.append("this is a ViT checkpoint: use a ViT builder")
    if missing or unexpected or mismatched:
        raise WeightsMismatchError(source, missing, unexpected, mismatched, hints)
    if verify is not None:
        verify()
    for target, entry in plan:
        value = entry.load().reshape(target.shape)
        target.variable.assign(value.astype(target.variable.dtype))
    if "head" in skip:
        for key, target in targets.items():
            if _group(key) == "head":
                target.variable.assign(np.zeros(target.shape, target.variable.dtype))


def _head_skip_reason(targets, entries, model_groups, file_groups):
    if "head" not in file_groups:
        return "the file has no head"
    if "pre_logits" in file_groups and "pre_logits" not in model_groups:
        return "the file's head follows a pre_logits layer that the model does not have (representation_size=None)"
    for key, target in targets.items():
        if _group(key) == "head" and key in entries and _squeezed(entries[key].shape) != _squeezed(target.shape):
            return f"{key} has shape {entries[key].shape}, the model's {target.file_shape} (classes differ)"
    return None


def save_npz(model, path):
    """Writes `model`'s variables in the published `.npz` layout of its
    family (vision_transformer for ViT/hybrids, big_transfer for BiT)."""
    arrays = {}
    for key, target in model_targets(model).items():
        value = keras.ops.convert_to_numpy(target.variable.value)
        arrays[key] = value.astype(np.float32).reshape(target.file_shape)
    path = str(path)
    if not path.endswith(".npz"):
        raise ValueError(f"save_npz writes a .npz file; received path {path!r}")
    # Written beside and renamed, so an interrupted save never leaves a
    # corrupt checkpoint under the final name.
    tmp = path[: -len(".npz")] + ".partial.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, path)
    return path
