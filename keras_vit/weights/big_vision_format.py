"""big_vision `.npz` checkpoints, translated to the vision_transformer key
layout: 'params/' (or 'params/img/') prefix, linen module names, a top-level
'pos_embedding' that excludes the class token, and possibly one stacked
'Transformer/encoderblock' with a leading layer axis."""
import re

import numpy as np

from keras_vit.weights.npz_reader import Entry

_PREFIXES = ("params/img/", "params/")
_BLOCK_RENAMES = {
    "MultiHeadDotProductAttention_0": "MultiHeadDotProductAttention_1",
    "LayerNorm_1": "LayerNorm_2",
    "MlpBlock_0": "MlpBlock_3",
}


def is_big_vision(keys):
    return any(k.startswith("params/") for k in keys) or "pos_embedding" in keys or any(
        k.startswith("Transformer/encoderblock/") or "MultiHeadDotProductAttention_0" in k for k in keys
    )


def to_vit_layout(entries):
    """{big_vision key: Entry} -> {vision_transformer key: Entry}."""
    stripped = {}
    for key, entry in entries.items():
        for prefix in _PREFIXES:
            if key.startswith(prefix):
                stripped[key[len(prefix):]] = entry
                break
        else:
            if not key.startswith(("opt/", "opt_state/", "step")):
                stripped[key] = entry
    out = {}
    for key, entry in stripped.items():
        if key.startswith("Transformer/encoderblock/"):
            rest = _rename_block_part(key[len("Transformer/encoderblock/"):])
            stack = _Stack(entry)
            for i in range(entry.shape[0]):
                out[f"Transformer/encoderblock_{i}/{rest}"] = Entry(entry.shape[1:], lambda stack=stack, i=i: stack.layer(i))
        elif re.match(r"Transformer/encoderblock_\d+/", key):
            head, rest = key.split("/", 2)[:2], key.split("/", 2)[2]
            out["/".join(head) + "/" + _rename_block_part(rest)] = entry
        elif key == "pos_embedding":
            if "cls" in stripped:
                # big_vision adds position embeddings before prepending the
                # class token: a zero row for it is the same computation.
                out["Transformer/posembed_input/pos_embedding"] = Entry(
                    (entry.shape[0], entry.shape[1] + 1, entry.shape[2]),
                    lambda entry=entry: _prepend_zero_row(entry.load()),
                )
            else:
                out["Transformer/posembed_input/pos_embedding"] = entry
        else:
            out[key] = entry
    return out


class _Stack:
    """A stacked (layers, ...) array read once and kept only until every
    layer's slice has been taken."""

    def __init__(self, entry):
        self.entry, self.value, self.taken = entry, None, set()

    def layer(self, i):
        if self.value is None:
            self.value = self.entry.load()
        out = np.array(self.value[i])
        self.taken.add(i)
        if len(self.taken) == self.entry.shape[0]:
            self.value, self.taken = None, set()
        return out


def _rename_block_part(rest):
    first, _, tail = rest.partition("/")
    return f"{_BLOCK_RENAMES.get(first, first)}/{tail}"


def _prepend_zero_row(posemb):
    return np.concatenate([np.zeros_like(posemb[:, :1]), posemb], axis=1)
