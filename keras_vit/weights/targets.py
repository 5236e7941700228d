"""The model side of every checkpoint format: each variable of a keras_vit
model under its key in the published layouts (vision_transformer for ViT
and hybrids, big_transfer for BiT), with the shape the files store it in."""
import keras

from keras_vit.weights.errors import WeightsError

from keras_vit.layers import (
    BiTRoot,
    Bottleneck,
    ClassToken,
    HybridRoot,
    PatchEmbedding,
    PositionEmbedding,
    PreActBottleneck,
    TransformerEncoderBlock,
)


class Target:
    def __init__(self, variable, file_shape=None, layer=None):
        self.variable = variable
        self.file_shape = tuple(file_shape or variable.shape)
        self.layer = layer  # set for position embeddings, which resize

    @property
    def shape(self):
        return tuple(self.variable.shape)


def model_family(model):
    if any(isinstance(l, (BiTRoot, PreActBottleneck)) for l in model.layers):
        return "bit"
    return "vit"


def model_targets(model):
    """{reference key: Target} for every variable of `model`."""
    targets = {}
    bit = model_family(model) == "bit"
    for layer in model.layers:
        for key, target in _layer_targets(layer, bit):
            targets[key] = target
    return targets


def _gn(prefix, norm, scale="scale", bias="bias", file_shape=None):
    c = norm.gamma.shape[-1]
    shape = file_shape or (c,)
    return [(f"{prefix}/{scale}", Target(norm.gamma, shape)), (f"{prefix}/{bias}", Target(norm.beta, shape))]


def _dense(prefix, dense, kernel_shape=None):
    out = [(f"{prefix}/kernel", Target(dense.kernel, kernel_shape))]
    if dense.use_bias:
        out.append((f"{prefix}/bias", Target(dense.bias)))
    return out


def _layer_targets(layer, bit):
    name = layer.name
    if isinstance(layer, PatchEmbedding):
        return _dense("embedding", layer.projection)
    if isinstance(layer, ClassToken):
        return [("cls", Target(layer.cls))]
    if isinstance(layer, PositionEmbedding) and name == "posembed_input":
        return [("Transformer/posembed_input/pos_embedding", Target(layer.pos_embedding, layer=layer))]
    if isinstance(layer, TransformerEncoderBlock) and layer.attention.relative is not None:
        raise WeightsError(
            "relative position attention has no published .npz layout; save and load this variant "
            "with .weights.h5 or .keras"
        )
    if isinstance(layer, TransformerEncoderBlock):
        p = f"Transformer/{name}"
        attn = layer.attention
        out = _gn(f"{p}/LayerNorm_0", layer.norm_1) + _gn(f"{p}/LayerNorm_2", layer.norm_2)
        for proj in ("query", "key", "value", "out"):
            a = f"{p}/MultiHeadDotProductAttention_1/{proj}"
            out.append((f"{a}/kernel", Target(getattr(attn, f"{proj}_kernel"))))
            out.append((f"{a}/bias", Target(getattr(attn, f"{proj}_bias"))))
        out += _dense(f"{p}/MlpBlock_3/Dense_0", layer.mlp_dense_1)
        out += _dense(f"{p}/MlpBlock_3/Dense_1", layer.mlp_dense_2)
        return out
    if isinstance(layer, keras.layers.LayerNormalization) and name == "encoder_norm":
        return _gn("Transformer/encoder_norm", layer)
    if isinstance(layer, keras.layers.Dense) and name in ("pre_logits", "head"):
        if bit:
            c, k = layer.kernel.shape
            return _dense("resnet/head/conv2d", layer, kernel_shape=(1, 1, c, k))
        return _dense(name, layer)
    if isinstance(layer, HybridRoot):
        c = layer.filters
        return [("conv_root/kernel", Target(layer.conv_root.kernel))] + _gn(
            "gn_root", layer.gn_root, file_shape=(1, 1, 1, c)
        )
    if isinstance(layer, Bottleneck):
        p = name.replace("_", "/")
        out = []
        for conv, gn in (("conv1", "gn1"), ("conv2", "gn2"), ("conv3", "gn3"), ("conv_proj", "gn_proj")):
            conv_layer, gn_layer = getattr(layer, conv), getattr(layer, gn)
            if conv_layer is None:
                continue
            out.append((f"{p}/{conv}/kernel", Target(conv_layer.kernel)))
            out += _gn(f"{p}/{gn}", gn_layer, file_shape=(1, 1, 1, gn_layer.gamma.shape[-1]))
        return out
    if isinstance(layer, BiTRoot):
        return [("resnet/root_block/standardized_conv2d/kernel", Target(layer.conv.kernel))]
    if isinstance(layer, PreActBottleneck):
        p = "resnet/" + name.replace("_", "/")
        out = []
        for part in ("a", "b", "c"):
            out.append((f"{p}/{part}/standardized_conv2d/kernel", Target(getattr(layer, f"conv_{part}").kernel)))
            out += _gn(f"{p}/{part}/group_norm", getattr(layer, f"gn_{part}"), "gamma", "beta")
        if layer.proj is not None:
            out.append((f"{p}/a/proj/standardized_conv2d/kernel", Target(layer.proj.kernel)))
        return out
    if isinstance(layer, keras.layers.GroupNormalization) and name == "group_norm":
        return _gn("resnet/group_norm", layer, "gamma", "beta")
    if layer.weights:
        raise WeightsError(
            f"layer {name!r} ({type(layer).__name__}) has no place in the published .npz layouts; save "
            "and load this model with .weights.h5 or .keras"
        )
    return []

