import os

import keras
import numpy as np
import pytest
from helpers import TINY_VIT, predict, randomize, to_np

import keras_vit
from keras_vit import layers

X = np.random.default_rng(0).normal(size=(2, 16, 16, 3)).astype("float32")
VARIANTS = [("none", "stem"), ("learned_1d", "stem"), ("learned_1d", "every_layer"),
            ("learned_1d", "every_layer_shared"), ("learned_2d", "stem"), ("learned_2d", "every_layer"),
            ("learned_2d", "every_layer_shared"), ("relative", "stem"), ("sincos_2d", "stem")]
# Extra parameters over "none" for D=32, 4 heads, 2 layers, 16 grid tokens + cls.
EXTRA = {("none", "stem"): 0, ("learned_1d", "stem"): 17 * 32, ("learned_1d", "every_layer"): 2 * 17 * 32,
         ("learned_1d", "every_layer_shared"): 17 * 32, ("learned_2d", "stem"): 4 * 16 + 4 * 16 + 32,
         ("learned_2d", "every_layer"): 2 * 160, ("learned_2d", "every_layer_shared"): 160,
         ("relative", "stem"): 2 * 33 * 4 * 8, ("sincos_2d", "stem"): 0}


def _vit(kind, placement="stem", size=16, **kwargs):
    return keras_vit.VisionTransformer(**TINY_VIT, input_shape=(size, size, 3), classes=3, position_embedding=kind,
                                       posemb_placement=placement, **kwargs)


@pytest.mark.parametrize("kind,placement", VARIANTS)
def test_shapes_parameters_and_round_trips(kind, placement, tmp_path):
    base = _vit("none").count_params()
    model = randomize(_vit(kind, placement))
    assert model.count_params() - base == EXTRA[(kind, placement)]
    y = predict(model, X)
    assert y.shape == (2, 3)
    path = os.path.join(tmp_path, "m.keras")
    model.save(path)
    np.testing.assert_array_equal(predict(keras.models.load_model(path), X), y)
    weights = os.path.join(tmp_path, "m.weights.h5")
    model.save_weights(weights)
    np.testing.assert_array_equal(predict(_vit(kind, placement, weights=weights), X), y)


def test_learned_2d_rows_share_their_y_part():
    layer = layers.PositionEmbedding2D((3, 4), num_prefix_tokens=1)
    layer.build((None, 13, 8))
    randomize(layer)
    table = to_np(layer.table())[0, 1:].reshape(3, 4, 8)
    for row in range(3):
        np.testing.assert_array_equal(table[row, :, 4:], np.broadcast_to(table[row, :1, 4:], (4, 4)))
    for col in range(4):
        np.testing.assert_array_equal(table[:, col, :4], np.broadcast_to(table[:1, col, :4], (3, 4)))
    assert not np.allclose(table[0, 0, 4:], table[1, 0, 4:])


def test_relative_with_zero_offsets_equals_no_position():
    rel = randomize(_vit("relative"))
    none = _vit("none")
    for w in rel.weights:
        if "relative_embedding" in w.path:
            w.assign(np.zeros(w.shape, "float32"))
    by_path = {w.path: w for w in rel.weights}
    for w in none.weights:
        w.assign(by_path[w.path])
    np.testing.assert_allclose(predict(rel, X), predict(none, X), rtol=1e-5, atol=1e-6)
    assert not np.allclose(predict(randomize(_vit("relative"), seed=3), X), predict(none, X))


def test_relative_bias_uses_fused_attention_op():
    attn = layers.MultiHeadDotProductAttention(num_heads=2, relative_positions=5)
    x = np.random.default_rng(1).normal(size=(2, 5, 8)).astype("float32")
    attn.build(x.shape)
    randomize(attn)
    fused = to_np(attn(x))
    explicit, _ = attn(x, return_attention_scores=True)
    np.testing.assert_allclose(to_np(explicit), fused, rtol=1e-4, atol=1e-5)


def test_sincos_table():
    table = layers.sincos_2d_table((2, 3), 8)
    assert table.shape == (6, 8)
    np.testing.assert_allclose(table[0], [0, 0, 1, 1, 0, 0, 1, 1], atol=1e-7)  # position (0, 0)


def _smooth(model):
    """Position tables that vary smoothly along their position axis, as
    trained ones do (random tables cannot be interpolated meaningfully)."""
    rng = np.random.default_rng(7)
    for w in model.weights:
        name = w.path.split("/")[-1]
        if name not in ("pos_embedding", "x_embedding", "y_embedding", "relative_embedding"):
            continue
        shape = tuple(w.shape)
        axis = 1 if name == "pos_embedding" else 0
        n = shape[axis]
        wave = np.sin(3 * np.linspace(0, 1, n)).reshape([n if i == axis else 1 for i in range(len(shape))])
        direction = rng.normal(size=[1 if i == axis else d for i, d in enumerate(shape)])
        w.assign((0.5 * wave * direction).astype("float32"))
    return model


@pytest.mark.parametrize("kind", ["learned_1d", "learned_2d", "relative", "sincos_2d"])
def test_resize_to_a_larger_grid_keeps_predictions_close(kind, tmp_path):
    small = _smooth(randomize(_vit(kind), seed=5))
    path = os.path.join(tmp_path, "small.weights.h5")
    small.save_weights(path)
    big = _vit(kind, size=24, weights=path)
    image = np.random.default_rng(2).normal(size=(4, 4, 4, 3)).astype("float32")
    up16 = np.repeat(np.repeat(image, 4, axis=1), 4, axis=2)
    up24 = np.repeat(np.repeat(image, 6, axis=1), 6, axis=2)
    a, b = predict(small, up16), predict(big, up24)
    cosine = (a * b).sum() / np.linalg.norm(a) / np.linalg.norm(b)
    assert cosine > 0.9, cosine


def test_bad_position_settings():
    with pytest.raises(ValueError, match="position_embedding must be one of"):
        _vit("learned_3d")
    with pytest.raises(ValueError, match="needs a learned absolute position embedding"):
        _vit("relative", "every_layer")


def test_variants_have_no_published_npz_layout(tmp_path):
    with pytest.raises(keras_vit.WeightsError, match="no published .npz layout"):
        keras_vit.save_npz(_vit("relative"), os.path.join(tmp_path, "r.npz"))
    with pytest.raises(keras_vit.WeightsError, match="no place in the published"):
        keras_vit.save_npz(_vit("learned_2d"), os.path.join(tmp_path, "r.npz"))
