"""Logits of the authors' own code (vision_transformer Flax, big_transfer
PyTorch) for checkpoints in the published layouts, on this backend."""
import os

import numpy as np
import pytest
from conftest import assert_close
from fixtures import CASES, checkpoint, images, load_case, write_checkpoint

import keras_vit


def _build(case, path, **kwargs):
    spec, _ = load_case(case)
    x = images(case)
    return keras_vit.from_reference_config(spec["config"], x.shape[1:], weights=path, **kwargs), x


@pytest.mark.parametrize("case", CASES)
def test_reference_logits(case, tmp_path):
    spec, ref = load_case(case)
    path = write_checkpoint(spec["weights_case"], os.path.join(tmp_path, "ckpt.npz"))
    model, x = _build(case, path)
    assert_close(model.predict(x, verbose=0), ref)


def _big_vision_layout(ckpt, stacked):
    """The same weights as big_vision writes them."""
    out = {}
    renames = {"MultiHeadDotProductAttention_1": "MultiHeadDotProductAttention_0", "LayerNorm_2": "LayerNorm_1",
               "MlpBlock_3": "MlpBlock_0"}
    blocks = {}
    for key, value in ckpt.items():
        if key == "Transformer/posembed_input/pos_embedding":
            out["params/pos_embedding"] = value[:, 1:] if "cls" in ckpt else value
            continue
        parts = key.split("/")
        if key.startswith("Transformer/encoderblock_"):
            parts[2] = renames.get(parts[2], parts[2])
            if stacked:
                blocks.setdefault("/".join(parts[2:]), {})[int(parts[1].split("_")[1])] = value
                continue
        out["params/" + "/".join(parts)] = value
    for rest, per_layer in blocks.items():
        out[f"params/Transformer/encoderblock/{rest}"] = np.stack([per_layer[i] for i in sorted(per_layer)])
    return out


@pytest.mark.parametrize("case", ["vit_tiny_token", "vit_tiny_gap"])
@pytest.mark.parametrize("stacked", [False, True])
def test_big_vision_layout(case, stacked, tmp_path):
    """big_vision adds posemb before the class token; loading must keep the
    logits identical to the original-layout file."""
    spec, ref = load_case(case)
    ckpt = checkpoint(case)
    if "cls" in ckpt:
        # A big_vision file cannot hold a class-token position: make it zero
        # in the reference checkpoint too, then compare both layouts.
        ckpt["Transformer/posembed_input/pos_embedding"][:, 0] = 0.0
    original = os.path.join(tmp_path, "orig.npz")
    np.savez(original, **ckpt)
    bv = os.path.join(tmp_path, "bv.npz")
    np.savez(bv, **_big_vision_layout(ckpt, stacked))
    a, x = _build(case, original)
    b, _ = _build(case, bv)
    np.testing.assert_allclose(b.predict(x, verbose=0), a.predict(x, verbose=0), rtol=0, atol=1e-6)


@pytest.mark.parametrize("case", ["vit_tiny_token", "hybrid_tiny", "bit_r50x1_h10"])
def test_save_npz_round_trip(case, tmp_path):
    spec, ref = load_case(case)
    path = write_checkpoint(spec["weights_case"], os.path.join(tmp_path, "ckpt.npz"))
    model, x = _build(case, path)
    exported = keras_vit.save_npz(model, os.path.join(tmp_path, "export.npz"))
    original = np.load(path)
    written = np.load(exported)
    assert sorted(written.files) == sorted(original.files)
    for key in original.files:
        assert written[key].shape == original[key].shape, key
    again, _ = _build(case, exported)
    np.testing.assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))
