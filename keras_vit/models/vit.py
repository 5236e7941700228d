"""ViT and hybrid ResNet+ViT builders (functional keras.Model)."""
import keras

from keras_vit.layers import (
    Bottleneck,
    ClassToken,
    HybridRoot,
    PatchEmbedding,
    PositionEmbedding,
    PositionEmbedding2D,
    SinCosPositionEmbedding,
    TokenPooling,
    TransformerEncoderBlock,
)
from keras_vit.models.inputs import check_choice, check_classes, head_dtype, image_input, model_inputs
from keras_vit.models.variants import decode_variant


def VisionTransformer(
    patch_size=16,
    hidden_size=768,
    mlp_dim=3072,
    num_heads=12,
    num_layers=12,
    resnet_stages=None,
    resnet_width=1,
    include_top=True,
    weights=None,
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation=None,
    name=None,
    representation_size=None,
    dropout_rate=0.0,
    attention_dropout_rate=0.0,
    posemb_resize="linear",
    flash_attention=None,
    position_embedding="learned_1d",
    posemb_placement="stem",
    remat=False,
    preset_family=None,
):
    """Builds a Vision Transformer for any configuration.

    Args:
        patch_size: patch side (int or pair) on the image, or on the ResNet
            feature map for hybrids.
        hidden_size, mlp_dim, num_heads, num_layers: encoder dimensions.
        resnet_stages: `None` for a plain ViT; a tuple of stage sizes for a
            hybrid (e.g. `(3, 4, 9)` for R50+ViT-B/16); `()` for the root only.
        resnet_width: ResNet width factor of a hybrid stem.
        include_top: whether to end with the classification head.
        weights: `None`, a preset tag (see `keras_vit.list_presets()`), a
            local `.npz`/`.weights.h5` path, or a URL.
        input_tensor: optional tensor to use as the image input.
        input_shape: `(H, W, 3)`; H and W must be multiples of the total stride.
        pooling: `"token"` (class token, default) or `"gap"` (mean of tokens,
            no class token). With `include_top=False` and `pooling=None` the
            output is the encoded token sequence.
        classes: number of classes of the head.
        classifier_activation: activation of the head (`None`: logits).
        name: model name.
        representation_size: width of the tanh `pre_logits` layer, if any.
        dropout_rate, attention_dropout_rate: as in the paper.
        posemb_resize: `"linear"` (reference) or `"bicubic"` resizing of
            position embeddings loaded from another grid.
        flash_attention: passed to `keras.ops.dot_product_attention`.
        position_embedding: the paper's ablation (Appendix D.4): `"none"`,
            `"learned_1d"` (the published checkpoints), `"learned_2d"` (X and
            Y embeddings of D/2 each), `"relative"` (1-D relative attention
            logits biasing each block's attention) or `"sincos_2d"` (fixed).
        posemb_placement: for learned kinds, `"stem"` (added once),
            `"every_layer"` (one per block) or `"every_layer_shared"`.
        remat: recompute each encoder block's activations in the backward
            pass instead of storing them (less memory, about a third more
            compute per training step).
        preset_family: the builder name whose presets `weights` may name.
    """
    from keras_vit.weights import load_weights, preset_image_size

    if pooling is not None:
        check_choice("pooling", pooling, ("token", "gap"))
    check_classes(classes, include_top)
    check_choice("posemb_resize", posemb_resize, ("linear", "bicubic"))
    check_choice("position_embedding", position_embedding, POSITION_EMBEDDINGS)
    check_choice("posemb_placement", posemb_placement, ("stem", "every_layer", "every_layer_shared"))
    if posemb_placement != "stem" and position_embedding not in ("learned_1d", "learned_2d"):
        raise ValueError(
            f"posemb_placement={posemb_placement!r} needs a learned absolute position embedding "
            f"('learned_1d' or 'learned_2d'), received position_embedding={position_embedding!r}"
        )
    if representation_size is not None and (not isinstance(representation_size, int) or representation_size < 1):
        raise ValueError(f"representation_size must be None or a positive int, received {representation_size!r}")
    if hidden_size % num_heads:
        raise ValueError(f"hidden_size={hidden_size} is not divisible by num_heads={num_heads}")
    patch = (patch_size, patch_size) if isinstance(patch_size, int) else tuple(patch_size)
    if patch[0] != patch[1]:
        raise ValueError(f"non-square patches are not supported, received patch_size={patch_size!r}")
    feature_stride = 1
    if resnet_stages is not None:
        resnet_stages = tuple(int(s) for s in resnet_stages)
        feature_stride = 4 * 2 ** max(len(resnet_stages) - 1, 0)
    stride = patch[0] * feature_stride
    what = f"patch size {patch[0]}" if feature_stride == 1 else (
        f"total stride {stride} (ResNet stride {feature_stride} x patch {patch[0]})")
    default_size = preset_image_size(preset_family, weights) or 224
    inputs, image_shape = image_input(input_tensor, input_shape, default_size, stride, what, weights)
    token_pooling = pooling or "token"
    grid = (image_shape[0] // stride, image_shape[1] // stride)

    x = inputs
    if resnet_stages is not None:
        width = int(64 * resnet_width)
        x = HybridRoot(width, name="root")(x)
        for s, units in enumerate(resnet_stages):
            for u in range(units):
                x = Bottleneck(
                    width * 2**s, strides=2 if (s > 0 and u == 0) else 1, name=f"block{s + 1}_unit{u + 1}"
                )(x)
    x = PatchEmbedding(hidden_size, patch, name="embedding")(x)
    prefix = 0
    if token_pooling == "token":
        x = ClassToken(name="cls")(x)
        prefix = 1
    def posemb(name):
        if position_embedding == "learned_1d":
            return PositionEmbedding(grid, prefix, resize_method=posemb_resize, name=name)
        if position_embedding == "learned_2d":
            return PositionEmbedding2D(grid, prefix, name=name)
        return SinCosPositionEmbedding(grid, prefix, name=name)

    if posemb_placement == "stem" and position_embedding not in ("none", "relative"):
        x = posemb("posembed_input")(x)
    x = keras.layers.Dropout(dropout_rate, name="posemb_dropout")(x)
    shared = posemb("posembed_shared") if posemb_placement == "every_layer_shared" else None
    relative = prefix + grid[0] * grid[1] if position_embedding == "relative" else None
    # Only the class token leaves a classifier: its last block skips the
    # other tokens' queries, attention output and MLP (the logits are the
    # same). The token sequence (include_top=False, pooling=None) is whole.
    class_token_only = token_pooling == "token" and (include_top or pooling is not None)
    for i in range(num_layers):
        if posemb_placement == "every_layer":
            x = posemb(f"posembed_{i}")(x)
        elif shared is not None:
            x = shared(x)
        x = TransformerEncoderBlock(
            num_heads,
            mlp_dim,
            dropout_rate=dropout_rate,
            attention_dropout_rate=attention_dropout_rate,
            flash_attention=flash_attention,
            relative_positions=relative,
            remat=remat,
            query_tokens=1 if class_token_only and i == num_layers - 1 else None,
            name=f"encoderblock_{i}",
        )(x)
    x = keras.layers.LayerNormalization(epsilon=1e-6, name="encoder_norm")(x)
    if include_top or pooling is not None:
        x = TokenPooling(token_pooling, name="pooling")(x)
        if representation_size is not None:
            x = keras.layers.Dense(representation_size, activation="tanh", name="pre_logits")(x)
    if include_top:
        x = keras.layers.Dense(
            classes,
            activation=classifier_activation,
            kernel_initializer="zeros",
            name="head",
            dtype=head_dtype(),
        )(x)
    model = keras.Model(model_inputs(inputs, input_tensor), x, name=name or "vision_transformer")
    if weights is not None:
        load_weights(model, weights, preset_family=preset_family)
    return model


POSITION_EMBEDDINGS = ("none", "learned_1d", "learned_2d", "relative", "sincos_2d")


def _named(builder_name, variant, doc_name):
    config = decode_variant(variant)

    def builder(
        include_top=True,
        weights=None,
        input_tensor=None,
        input_shape=None,
        pooling=None,
        classes=1000,
        classifier_activation=None,
        name=None,
        representation_size=None,
        dropout_rate=0.0,
        attention_dropout_rate=0.0,
        **kwargs,
    ):
        return VisionTransformer(
            **config,
            include_top=include_top,
            weights=weights,
            input_tensor=input_tensor,
            input_shape=input_shape,
            pooling=pooling,
            classes=classes,
            classifier_activation=classifier_activation,
            name=name or builder_name.lower(),
            representation_size=representation_size,
            dropout_rate=dropout_rate,
            attention_dropout_rate=attention_dropout_rate,
            preset_family=builder_name,
            **kwargs,
        )

    builder.__name__ = builder.__qualname__ = builder_name
    builder.__doc__ = (
        f"Builds {doc_name} ({variant}).\n\nSame arguments as `VisionTransformer` "
        "(keras.applications signature plus representation_size, dropout_rate, "
        "attention_dropout_rate, posemb_resize, flash_attention, position_embedding, "
        "posemb_placement, remat); dimensions come "
        f"from the variant table: {config}."
    )
    builder.variant = variant
    return builder


ViT_Ti16 = _named("ViT_Ti16", "Ti/16", "ViT-Ti/16")
ViT_S16 = _named("ViT_S16", "S/16", "ViT-S/16")
ViT_S32 = _named("ViT_S32", "S/32", "ViT-S/32")
ViT_B16 = _named("ViT_B16", "B/16", "ViT-B/16")
ViT_B32 = _named("ViT_B32", "B/32", "ViT-B/32")
ViT_B8 = _named("ViT_B8", "B/8", "ViT-B/8")
ViT_L16 = _named("ViT_L16", "L/16", "ViT-L/16")
ViT_L32 = _named("ViT_L32", "L/32", "ViT-L/32")
ViT_H14 = _named("ViT_H14", "H/14", "ViT-H/14")
R_ViT_Ti16 = _named("R_ViT_Ti16", "R+Ti/16", "R+ViT-Ti/16 (ResNet root only)")
R26_ViT_S32 = _named("R26_ViT_S32", "R26+S/32", "R26+ViT-S/32")
R26_ViT_B32 = _named("R26_ViT_B32", "R26+B/32", "R26+ViT-B/32")
R50_ViT_B16 = _named("R50_ViT_B16", "R50+B/16", "R50+ViT-B/16")
R50_ViT_L32 = _named("R50_ViT_L32", "R50+L/32", "R50+ViT-L/32")

VIT_BUILDERS = {
    b.__name__: b
    for b in (
        ViT_Ti16, ViT_S16, ViT_S32, ViT_B16, ViT_B32, ViT_B8, ViT_L16, ViT_L32, ViT_H14,
        R_ViT_Ti16, R26_ViT_S32, R26_ViT_B32, R50_ViT_B16, R50_ViT_L32,
    )
}
