import logging
import os
import pathlib

import numpy as np
from helpers import to_np
import pytest
from fixtures import checkpoint, images, load_case, write_checkpoint
from helpers import TINY_VIT, predict, randomize

import keras_vit
from keras_vit.weights import presets

TOKEN = dict(TINY_VIT, representation_size=16, classes=5, input_shape=(16, 16, 3))


def _tiny(**kwargs):
    return keras_vit.VisionTransformer(**dict(TOKEN, **kwargs))


@pytest.fixture
def token_ckpt(tmp_path):
    return write_checkpoint("vit_tiny_token", os.path.join(tmp_path, "ViT-tiny.npz"))


def test_new_head_when_classes_differ(token_ckpt, caplog):
    with caplog.at_level(logging.WARNING, logger="keras_vit"):
        model = _tiny(classes=3, weights=token_ckpt)
    assert "Head not loaded" in caplog.text
    assert not to_np(model.get_layer("head").kernel).any()
    np.testing.assert_array_equal(
        to_np(model.get_layer("pre_logits").kernel), checkpoint("vit_tiny_token")["pre_logits/kernel"]
    )


def test_pre_logits_dropped_without_representation_size(token_ckpt, caplog):
    with caplog.at_level(logging.WARNING, logger="keras_vit"):
        model = _tiny(representation_size=None, weights=token_ckpt)
    assert "pre_logits" in caplog.text
    assert not to_np(model.get_layer("head").kernel).any()


def test_include_top_false_ignores_head(token_ckpt):
    model = _tiny(include_top=False, representation_size=None, weights=token_ckpt)
    assert model.output_shape == (None, 17, 32)


def test_mismatch_lists_every_problem(token_ckpt):
    with pytest.raises(keras_vit.WeightsMismatchError) as info:
        keras_vit.VisionTransformer(**dict(TOKEN, mlp_dim=48, num_layers=3), weights=token_ckpt)
    err = info.value
    assert "Transformer/encoderblock_2/LayerNorm_0/scale" in err.missing
    assert ("Transformer/encoderblock_0/MlpBlock_3/Dense_0/kernel", (32, 48), (32, 64)) in err.mismatched
    assert "missing keys" in str(err) and "shape mismatch" in str(err)


def test_unexpected_keys_and_pooling_hint(token_ckpt):
    with pytest.raises(keras_vit.WeightsMismatchError, match="pooling='token'") as info:
        _tiny(pooling="gap", weights=token_ckpt)
    assert "cls" in info.value.unexpected


def test_failed_load_leaves_model_untouched(token_ckpt, tmp_path):
    model = randomize(_tiny())
    before = [to_np(w) for w in model.weights]
    ckpt = checkpoint("vit_tiny_token")
    ckpt["head/kernel"] = ckpt["head/kernel"][:, :4]
    del ckpt["Transformer/encoder_norm/scale"]
    bad = os.path.join(tmp_path, "bad.npz")
    np.savez(bad, **ckpt)
    with pytest.raises(keras_vit.WeightsMismatchError):
        keras_vit.load_weights(model, bad)
    for w, b in zip(model.weights, before):
        np.testing.assert_array_equal(to_np(w), b)


def test_truncated_npz(token_ckpt, tmp_path):
    data = pathlib.Path(token_ckpt).read_bytes()
    cut = os.path.join(tmp_path, "cut.npz")
    pathlib.Path(cut).write_bytes(data[: len(data) // 2])
    with pytest.raises(keras_vit.WeightsError, match="truncated"):
        _tiny(weights=cut)


def test_not_an_npz(tmp_path):
    junk = os.path.join(tmp_path, "junk.npz")
    pathlib.Path(junk).write_text("hello")
    with pytest.raises(keras_vit.WeightsError, match="not a readable .npz"):
        _tiny(weights=junk)


def test_pickles_are_refused(tmp_path):
    path = os.path.join(tmp_path, "pickle.npz")
    np.savez(path, cls=np.array([{"evil": 1}], dtype=object))
    with pytest.raises(keras_vit.WeightsError, match="never loaded"):
        _tiny(weights=path)


def test_unknown_weights_name():
    with pytest.raises(keras_vit.WeightsError, match="neither a preset of ViT_B16.*imagenet21k"):
        keras_vit.ViT_B16(weights="imagenet22k")


def test_unknown_format(tmp_path):
    path = os.path.join(tmp_path, "w.bin")
    pathlib.Path(path).write_bytes(b"\0" * 10)
    with pytest.raises(keras_vit.WeightsError, match="cannot tell the format"):
        _tiny(weights=path)


def test_bit_weights_into_vit(tmp_path):
    path = write_checkpoint("bit_r50x1_h10", os.path.join(tmp_path, "bit.npz"))
    with pytest.raises(keras_vit.WeightsMismatchError, match="BiT checkpoint"):
        _tiny(weights=path)


def test_preset_download_through_file_url(token_ckpt, monkeypatch, tmp_path):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras_home"))
    url = pathlib.Path(token_ckpt).as_uri()
    monkeypatch.setitem(presets.PRESETS, "Tiny", {"test": presets.Preset(url, 16, 5, 16)})
    spec, ref = load_case("vit_tiny_token")
    model = _tiny(weights="test", preset_family="Tiny")
    np.testing.assert_allclose(predict(model, images("vit_tiny_token")), ref, atol=1e-4)
    cached = list((tmp_path / "keras_home").rglob("ViT-tiny.npz"))
    assert len(cached) == 1
    # A URL directly, too.
    _tiny(weights=url)


def test_unreachable_url_says_how_to_use_a_local_file(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras_home"))
    url = (tmp_path / "missing" / "ViT-B_16.npz").as_uri()
    with pytest.raises(keras_vit.WeightsError, match="pass its local path"):
        _tiny(weights=url)


def test_presets_table():
    table = keras_vit.list_presets()
    assert "imagenet21k" in table["ViT_L16"]
    preset = presets.get_preset("ViT_B16", "imagenet21k+imagenet2012")
    assert preset.image_size == 384 and preset.url.endswith("imagenet21k+imagenet2012/ViT-B_16.npz")
    assert presets.get_preset("BiT_R50x1", "bit_m").url.endswith("BiT-M-R50x1.npz")


def test_h5_resizes_position_embedding(tmp_path):
    small = randomize(_tiny())
    path = os.path.join(tmp_path, "small.weights.h5")
    small.save_weights(path)
    big = _tiny(input_shape=(24, 32, 3), weights=path)
    posemb = to_np(small.get_layer("posembed_input").pos_embedding)
    expected = keras_vit.resize_position_embedding(posemb, (4, 4), (6, 8), 1)
    np.testing.assert_allclose(to_np(big.get_layer("posembed_input").pos_embedding), expected, atol=1e-6)
    np.testing.assert_array_equal(to_np(big.get_layer("head").kernel), to_np(small.get_layer("head").kernel))


def test_h5_new_head_and_mismatch(tmp_path):
    model = randomize(_tiny())
    path = os.path.join(tmp_path, "m.weights.h5")
    model.save_weights(path)
    other = _tiny(classes=9, weights=path)
    assert not to_np(other.get_layer("head").kernel).any()
    np.testing.assert_array_equal(
        to_np(other.get_layer("encoderblock_1").mlp_dense_1.kernel),
        to_np(model.get_layer("encoderblock_1").mlp_dense_1.kernel),
    )
    with pytest.raises(keras_vit.WeightsMismatchError, match="encoderblock_2"):
        _tiny(num_layers=3, weights=path)


def test_truncated_h5(tmp_path):
    model = _tiny()
    path = os.path.join(tmp_path, "m.weights.h5")
    model.save_weights(path)
    data = pathlib.Path(path).read_bytes()
    cut = os.path.join(tmp_path, "cut.weights.h5")
    pathlib.Path(cut).write_bytes(data[: len(data) // 3])
    with pytest.raises(keras_vit.WeightsError, match="truncated"):
        _tiny(weights=cut)


def test_bit_new_head(tmp_path):
    path = write_checkpoint("bit_r50x1_h10", os.path.join(tmp_path, "bit.npz"))
    model = keras_vit.BiT_R50x1(weights=path, input_shape=(64, 64, 3), classes=4)
    assert not to_np(model.get_layer("head").kernel).any()
    spec, ref = load_case("bit_r50x1_h10")
    same = keras_vit.BiT_R50x1(weights=path, input_shape=(64, 64, 3), classes=10)
    np.testing.assert_allclose(predict(same, images("bit_r50x1_h10")), ref, atol=1e-4 * np.abs(ref).max())


def test_non_square_grid_npz_round_trip(tmp_path):
    """A 2x8 grid has a square token count (16): it must not be 'resized'."""
    model = randomize(_tiny(input_shape=(8, 32, 3)))
    path = keras_vit.save_npz(model, os.path.join(tmp_path, "wide.npz"))
    again = _tiny(input_shape=(8, 32, 3), weights=path)
    x = np.random.default_rng(0).normal(size=(2, 8, 32, 3)).astype("float32")
    np.testing.assert_array_equal(predict(again, x), predict(model, x))


def test_h5_classifier_layers_the_model_lacks(tmp_path, caplog):
    model = randomize(_tiny())
    path = os.path.join(tmp_path, "m.weights.h5")
    model.save_weights(path)
    features = _tiny(include_top=False, representation_size=None, weights=path)
    np.testing.assert_array_equal(
        to_np(features.get_layer("encoder_norm").gamma), to_np(model.get_layer("encoder_norm").gamma)
    )
    with caplog.at_level(logging.WARNING, logger="keras_vit"):
        no_pre = _tiny(representation_size=None, weights=path)
    assert "pre_logits" in caplog.text
    assert not to_np(no_pre.get_layer("head").kernel).any()


def test_weights_of_wrong_type():
    with pytest.raises(keras_vit.WeightsError, match="received 123"):
        _tiny(weights=123)


def test_corrupt_download_is_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras_home"))
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip")
    with pytest.raises(keras_vit.WeightsError, match="not a readable"):
        _tiny(weights=junk.as_uri())
    assert not list((tmp_path / "keras_home").rglob("junk.npz"))
