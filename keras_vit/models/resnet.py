"""BiT ResNetV2 builders (pre-activation, GroupNorm + weight standardization)."""
import keras

from keras_vit.layers import BiTRoot, PreActBottleneck
from keras_vit.models.inputs import check_choice, check_classes, head_dtype, image_input, model_inputs
from keras_vit.models.variants import BIT_DEPTHS


def ResNetV2(
    block_units=(3, 4, 6, 3),
    width_factor=1,
    include_top=True,
    weights=None,
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation=None,
    name=None,
    preset_family=None,
):
    """Builds a BiT ResNetV2 (big_transfer's `ResNetV2`) of any depth and width.

    The features are the output of the final GroupNorm + ReLU. With
    `include_top=True` they are averaged and fed to a zero-initialized Dense
    head (the reference's 1x1 conv on the pooled map). With
    `include_top=False`, `pooling` is `None` (feature map), `"avg"` or `"max"`.
    """
    from keras_vit.weights import load_weights, preset_image_size

    if pooling is not None:
        check_choice("pooling", pooling, ("avg", "max"))
    check_classes(classes, include_top)
    block_units = tuple(int(u) for u in block_units)
    if len(block_units) != 4 or min(block_units) < 1:
        raise ValueError(f"block_units must be four positive stage sizes, received {block_units!r}")
    default_size = preset_image_size(preset_family, weights) or 224
    inputs, _ = image_input(input_tensor, input_shape, default_size, 1, "stride", weights)

    wf = width_factor
    x = BiTRoot(64 * wf, name="root_block")(inputs)
    for b, units in enumerate(block_units):
        for u in range(units):
            x = PreActBottleneck(
                256 * wf * 2**b,
                64 * wf * 2**b,
                strides=2 if (b > 0 and u == 0) else 1,
                name=f"block{b + 1}_unit{u + 1:02d}",
            )(x)
    x = keras.layers.GroupNormalization(groups=32, epsilon=1e-5, name="group_norm")(x)
    x = keras.layers.ReLU(name="relu")(x)
    if include_top or pooling == "avg":
        x = keras.layers.GlobalAveragePooling2D(name="avg_pool")(x)
    elif pooling == "max":
        x = keras.layers.GlobalMaxPooling2D(name="max_pool")(x)
    if include_top:
        x = keras.layers.Dense(
            classes, activation=classifier_activation, kernel_initializer="zeros", name="head", dtype=head_dtype()
        )(x)
    model = keras.Model(model_inputs(inputs, input_tensor), x, name=name or "resnetv2")
    if weights is not None:
        load_weights(model, weights, preset_family=preset_family)
    return model


def _named(builder_name, depth, width_factor):
    def builder(
        include_top=True,
        weights=None,
        input_tensor=None,
        input_shape=None,
        pooling=None,
        classes=1000,
        classifier_activation=None,
        name=None,
    ):
        return ResNetV2(
            BIT_DEPTHS[depth],
            width_factor,
            include_top=include_top,
            weights=weights,
            input_tensor=input_tensor,
            input_shape=input_shape,
            pooling=pooling,
            classes=classes,
            classifier_activation=classifier_activation,
            name=name or builder_name.lower(),
            preset_family=builder_name,
        )

    builder.__name__ = builder.__qualname__ = builder_name
    builder.__doc__ = (
        f"Builds BiT ResNetV2-{depth}x{width_factor}; arguments as `ResNetV2` "
        "(the keras.applications signature)."
    )
    builder.variant = f"R{depth}x{width_factor}"
    return builder


BiT_R50x1 = _named("BiT_R50x1", 50, 1)
BiT_R50x3 = _named("BiT_R50x3", 50, 3)
BiT_R101x1 = _named("BiT_R101x1", 101, 1)
BiT_R101x3 = _named("BiT_R101x3", 101, 3)
BiT_R152x2 = _named("BiT_R152x2", 152, 2)
BiT_R152x4 = _named("BiT_R152x4", 152, 4)

BIT_BUILDERS = {b.__name__: b for b in (BiT_R50x1, BiT_R50x3, BiT_R101x1, BiT_R101x3, BiT_R152x2, BiT_R152x4)}
