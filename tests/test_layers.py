import keras
import numpy as np
from helpers import to_np
import pytest
from conftest import assert_close
from helpers import predict

from keras_vit import layers

LAYERS = [
    (layers.PatchEmbedding, dict(hidden_size=8, patch_size=4), (2, 8, 12, 3)),
    (layers.ClassToken, dict(), (2, 5, 8)),
    (layers.PositionEmbedding, dict(grid_size=(2, 3), num_prefix_tokens=1), (2, 7, 8)),
    (layers.MultiHeadDotProductAttention, dict(num_heads=2), (2, 5, 8)),
    (layers.TransformerEncoderBlock, dict(num_heads=2, mlp_dim=16), (2, 5, 8)),
    (layers.TransformerEncoderBlock, dict(num_heads=2, mlp_dim=16, remat=True), (2, 5, 8)),
    (layers.TransformerEncoderBlock, dict(num_heads=2, mlp_dim=16, query_tokens=2), (2, 5, 8)),
    (layers.TransformerEncoder, dict(num_layers=2, num_heads=2, mlp_dim=16), (2, 5, 8)),
    (layers.TokenPooling, dict(pooling="gap"), (2, 5, 8)),
    (layers.StdConv2D, dict(filters=4, kernel_size=3, epsilon=1e-10, epsilon_in_sqrt=True), (2, 8, 8, 3)),
    (layers.Bottleneck, dict(features=32, strides=2), (2, 8, 8, 64)),
    (layers.PreActBottleneck, dict(filters=128, middle_filters=32, strides=2), (2, 8, 8, 64)),
    (layers.HybridRoot, dict(filters=32), (2, 16, 16, 3)),
    (layers.BiTRoot, dict(filters=32), (2, 16, 16, 3)),
]


@pytest.mark.parametrize("cls,kwargs,shape", LAYERS, ids=[c.__name__ for c, _, _ in LAYERS])
def test_config_round_trip(cls, kwargs, shape):
    layer = cls(**kwargs)
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    y = predict(layer, x)
    assert tuple(layer.compute_output_shape(shape)) == y.shape
    config = layer.get_config()
    clone = cls.from_config(config)
    assert clone.get_config() == config
    # Registered: the generic deserializer finds the class by name.
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(again) is cls
    clone.build(shape)
    for src, dst in zip(layer.weights, clone.weights):
        dst.assign(src)
    np.testing.assert_array_equal(predict(clone, x), y)


def test_attention_fused_equals_explicit():
    attn = layers.MultiHeadDotProductAttention(num_heads=4)
    x = np.random.default_rng(0).normal(size=(2, 7, 16)).astype("float32")
    fused = predict(attn, x)
    explicit, probs = attn(x, return_attention_scores=True)
    assert_close(explicit, fused, 1e-5)
    np.testing.assert_allclose(to_np(keras.ops.sum(probs, -1)), 1.0, atol=1e-5)
    assert tuple(probs.shape) == (2, 4, 7, 7)


def test_attention_reference_shapes():
    attn = layers.MultiHeadDotProductAttention(num_heads=4)
    attn.build((None, 5, 32))
    assert attn.query_kernel.shape == (32, 4, 8)
    assert attn.query_bias.shape == (4, 8)
    assert attn.out_kernel.shape == (4, 8, 32)


def test_gelu_is_tanh_form():
    x = np.linspace(-4, 4, 101).astype("float32")
    expected = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(to_np(layers.gelu_tanh(x)), expected, atol=1e-6)


@pytest.mark.parametrize("relative", [None, 6], ids=["absolute", "relative"])
def test_query_tokens_compute_the_first_tokens_of_the_full_block(relative):
    full = layers.TransformerEncoderBlock(num_heads=2, mlp_dim=16, relative_positions=relative)
    first = layers.TransformerEncoderBlock(num_heads=2, mlp_dim=16, relative_positions=relative, query_tokens=2)
    x = np.random.default_rng(0).normal(size=(3, 6, 8)).astype("float32")
    full.build(x.shape)
    first.build(x.shape)
    assert len(first.weights) == len(full.weights)
    for src, dst in zip(full.weights, first.weights):
        dst.assign(src + 0.1 * np.random.default_rng(1).normal(size=src.shape))  # biases and tables not zero
        src.assign(dst)
    expected = predict(full, x)[:, :2]
    np.testing.assert_allclose(predict(first, x), expected, atol=1e-5)
    _, scores = first(x, return_attention_scores=True)
    _, full_scores = full(x, return_attention_scores=True)
    assert tuple(scores.shape) == (3, 2, 2, 6)
    np.testing.assert_allclose(to_np(scores), to_np(full_scores)[:, :, :2], atol=1e-6)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "1"])
def test_query_tokens_rejects_bad_values(bad):
    with pytest.raises(ValueError, match=f"query_tokens must be None or a positive int, received {bad!r}"):
        layers.TransformerEncoderBlock(num_heads=2, mlp_dim=16, query_tokens=bad)


def test_attention_dropout_only_when_training():
    block = layers.TransformerEncoderBlock(num_heads=2, mlp_dim=16, dropout_rate=0.5, attention_dropout_rate=0.5)
    x = np.random.default_rng(0).normal(size=(2, 5, 8)).astype("float32")
    a = predict(block, x)
    np.testing.assert_array_equal(predict(block, x), a)
    assert not np.allclose(to_np(block(x, training=True)), a)


@pytest.mark.parametrize("old,new", [((4, 4), (6, 6)), ((6, 6), (4, 4)), ((3, 5), (7, 2)), ((1, 1), (3, 3))])
def test_linear_resize_matches_scipy_zoom(old, new):
    scipy_ndimage = pytest.importorskip("scipy.ndimage")
    posemb = np.random.default_rng(0).normal(size=(1, 1 + old[0] * old[1], 6)).astype("float32")
    out = layers.resize_position_embedding(posemb, old, new, 1)
    grid = posemb[0, 1:].reshape(old + (6,))
    zoom = scipy_ndimage.zoom(grid, (new[0] / old[0], new[1] / old[1], 1), order=1)
    np.testing.assert_allclose(out[0, 1:], zoom.reshape(-1, 6), atol=1e-6)
    np.testing.assert_array_equal(out[:, :1], posemb[:, :1])


def test_bicubic_resize_keeps_constant_and_shape():
    posemb = np.ones((1, 16, 3), "float32")
    out = layers.resize_position_embedding(posemb, (4, 4), (7, 5), 0, method="bicubic")
    assert out.shape == (1, 35, 3)
    np.testing.assert_allclose(out, 1.0, atol=1e-6)


def test_resize_rejects_bad_input():
    with pytest.raises(ValueError, match="method"):
        layers.resize_position_embedding(np.zeros((1, 17, 2)), (4, 4), (5, 5), method="nearest")
    with pytest.raises(ValueError, match="needs 17"):
        layers.resize_position_embedding(np.zeros((1, 16, 2)), (4, 4), (5, 5), 1)


def test_std_conv_forms():
    x = np.random.default_rng(0).normal(size=(1, 5, 5, 3)).astype("float32")
    for in_sqrt, eps in ((False, 1e-5), (True, 1e-10)):
        conv = layers.StdConv2D(4, 3, epsilon=eps, epsilon_in_sqrt=in_sqrt)
        conv.build(x.shape)
        w = to_np(conv.kernel)
        mean = w.mean(axis=(0, 1, 2), keepdims=True)
        std = w.std(axis=(0, 1, 2), keepdims=True)
        ws = (w - mean) / (np.sqrt(std**2 + eps) if in_sqrt else std + eps)
        np.testing.assert_allclose(to_np(conv.standardized_kernel(conv.kernel)), ws, rtol=1e-5, atol=1e-6)
