import numpy as np
from helpers import to_np
import pytest
from helpers import TINY_VIT, check_model, predict, randomize

import keras_vit

# Parameter counts with a 1000-class head at 224 px (timm's numbers for the
# same architectures).
PARAMS_M = {
    "ViT_Ti16": 5.72, "ViT_S16": 22.05, "ViT_S32": 22.88, "ViT_B16": 86.57, "ViT_B32": 88.22,
    "ViT_B8": 86.58, "ViT_L16": 304.33, "ViT_L32": 306.54, "ViT_H14": 632.05,
    "R_ViT_Ti16": 6.34, "R26_ViT_S32": 36.43, "R26_ViT_B32": 101.38, "R50_ViT_B16": 98.66, "R50_ViT_L32": 328.99,
    "BiT_R50x1": 25.55, "BiT_R50x3": 217.32, "BiT_R101x1": 44.54, "BiT_R101x3": 387.93,
    "BiT_R152x2": 236.34, "BiT_R152x4": 936.53,
}
LARGE = {"ViT_H14", "ViT_L16", "ViT_L32", "R50_ViT_L32", "BiT_R50x3", "BiT_R101x3", "BiT_R152x2", "BiT_R152x4"}


def test_registry_is_complete():
    assert set(keras_vit.MODELS) == set(PARAMS_M)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.large) if n in LARGE else n for n in PARAMS_M]
)
def test_builder_parameter_count(name):
    model = keras_vit.get_builder(name)(input_shape=(224, 224, 3))
    assert model.count_params() / 1e6 == pytest.approx(PARAMS_M[name], rel=2e-3)
    assert model.output_shape == (None, 1000)


def test_unknown_model_name():
    with pytest.raises(ValueError, match="unknown model 'ViT_B17'.*Did you mean"):
        keras_vit.get_builder("ViT_B17")


def test_tiny_vit_round_trips(tmp_path):
    model = randomize(keras_vit.VisionTransformer(**TINY_VIT, input_shape=(16, 20, 3), classes=3,
                                                  representation_size=8))
    x = np.random.default_rng(0).normal(size=(2, 16, 20, 3)).astype("float32")
    assert check_model(model, x, tmp_path).shape == (2, 3)


def test_tiny_hybrid_round_trips(tmp_path):
    model = randomize(keras_vit.VisionTransformer(**dict(TINY_VIT, patch_size=1), resnet_stages=(1, 1),
                                                  input_shape=(32, 32, 3), classes=3))
    x = np.random.default_rng(0).normal(size=(2, 32, 32, 3)).astype("float32")
    assert check_model(model, x, tmp_path).shape == (2, 3)
    assert model.get_layer("posembed_input").grid_size == (4, 4)


def test_tiny_bit_round_trips(tmp_path):
    model = randomize(keras_vit.ResNetV2((1, 1, 1, 1), 1, input_shape=(32, 32, 3), classes=3), seed=2)
    x = np.random.default_rng(0).normal(size=(2, 32, 32, 3)).astype("float32")
    assert check_model(model, x, tmp_path).shape == (2, 3)


@pytest.mark.parametrize(
    "kwargs,shape",
    [
        (dict(include_top=False), (2, 1 + 4 * 5, 32)),
        (dict(include_top=False, pooling="gap"), (2, 32)),
        (dict(include_top=False, pooling="token", representation_size=8), (2, 8)),
        (dict(pooling="gap", classes=7, classifier_activation="softmax"), (2, 7)),
    ],
)
def test_vit_outputs(kwargs, shape):
    model = keras_vit.VisionTransformer(**TINY_VIT, input_shape=(16, 20, 3), **kwargs)
    x = np.zeros((2, 16, 20, 3), "float32")
    assert predict(model, x).shape == shape
    has_cls = any(layer.name == "cls" for layer in model.layers)
    assert has_cls == (kwargs.get("pooling", "token") == "token")


def test_classifier_last_block_computes_only_the_class_token():
    clf = randomize(keras_vit.VisionTransformer(**TINY_VIT, input_shape=(16, 20, 3), classes=3))
    tokens = keras_vit.VisionTransformer(**TINY_VIT, input_shape=(16, 20, 3), include_top=False)
    last = f"encoderblock_{TINY_VIT['num_layers'] - 1}"
    assert clf.get_layer(last).query_tokens == 1 and tokens.get_layer(last).query_tokens is None
    assert clf.get_layer("encoderblock_0").query_tokens is None
    for layer in tokens.layers:
        if layer.weights:
            layer.set_weights(clf.get_layer(layer.name).get_weights())
    x = np.random.default_rng(0).normal(size=(2, 16, 20, 3)).astype("float32")
    head = clf.get_layer("head")
    expected = predict(tokens, x)[:, 0] @ to_np(head.kernel) + to_np(head.bias)
    np.testing.assert_allclose(predict(clf, x), expected, rtol=1e-5, atol=1e-5)


def test_bit_features():
    model = keras_vit.ResNetV2((1, 1, 1, 1), include_top=False, input_shape=(64, 64, 3))
    assert model.output_shape == (None, 2, 2, 2048)
    pooled = keras_vit.ResNetV2((1, 1, 1, 1), include_top=False, pooling="avg", input_shape=(64, 64, 3))
    assert pooled.output_shape == (None, 2048)


def test_input_tensor():
    import keras

    inputs = keras.Input((16, 16, 3))
    model = keras_vit.VisionTransformer(**TINY_VIT, input_tensor=inputs, classes=2)
    assert model.inputs[0] is inputs


def test_fit_one_step():
    import keras

    model = keras_vit.VisionTransformer(**TINY_VIT, input_shape=(16, 16, 3), classes=3, dropout_rate=0.1,
                                        attention_dropout_rate=0.1)
    model.compile(keras.optimizers.AdamW(1e-3), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.random.default_rng(0).normal(size=(8, 16, 16, 3)).astype("float32")
    y = np.arange(8) % 3
    history = model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert history.history["loss"][-1] < history.history["loss"][0]


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(input_shape=(18, 16, 3)), "image height 18 is not divisible by 4, the patch size 4"),
        (dict(input_shape=(16, 16)), r"input_shape must be \(height, width, channels\)"),
        (dict(input_shape=(None, 16, 3)), "height and width must be known"),
        (dict(pooling="avg"), "pooling must be one of \\('token', 'gap'\\), received 'avg'"),
        (dict(classes=0), "classes must be a positive int"),
        (dict(posemb_resize="nearest"), "posemb_resize must be one of"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        keras_vit.VisionTransformer(**TINY_VIT, **kwargs)


def test_hybrid_size_must_match_total_stride():
    with pytest.raises(ValueError, match="not divisible by 16, the total stride 16"):
        keras_vit.R50_ViT_B16(input_shape=(200, 224, 3))


def test_wrong_channels_with_weights(tmp_path):
    with pytest.raises(ValueError, match="1 channel\\(s\\), but pretrained weights expect 3"):
        keras_vit.ViT_B16(weights="imagenet21k", input_shape=(224, 224, 1))


@pytest.mark.parametrize("family", ["vit", "hybrid", "bit"])
def test_mixed_bfloat16(family):
    import keras

    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        if family == "vit":
            model = keras_vit.VisionTransformer(**TINY_VIT, input_shape=(16, 16, 3), classes=3)
        elif family == "hybrid":
            model = keras_vit.VisionTransformer(**dict(TINY_VIT, patch_size=2), resnet_stages=(), input_shape=(32, 32, 3), classes=3)
        else:
            model = keras_vit.ResNetV2((1, 1, 1, 1), input_shape=(32, 32, 3), classes=3)
        x = np.random.default_rng(0).normal(size=(2,) + model.input_shape[1:]).astype("float32")
        y = model(x)
        assert keras.backend.standardize_dtype(y.dtype) == "float32"
        assert np.isfinite(to_np(y)).all()
    finally:
        keras.config.set_dtype_policy("float32")


def test_input_tensor_and_shape_must_agree():
    import keras

    with pytest.raises(ValueError, match="disagrees with input_tensor"):
        keras_vit.VisionTransformer(**TINY_VIT, input_tensor=keras.Input((32, 32, 3)), input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="must be a Keras tensor"):
        keras_vit.VisionTransformer(**TINY_VIT, input_tensor=np.zeros((1, 16, 16, 3)))
    with pytest.raises(ValueError, match="channels must be known"):
        keras_vit.VisionTransformer(**TINY_VIT, input_tensor=keras.Input((16, 16, None)))
