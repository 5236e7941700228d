"""Builds a model from the authors' config dictionaries: vision_transformer's
`ml_collections` model configs (patches.size, hidden_size, transformer.*,
classifier, representation_size, resnet.*) or a BiT name ("BiT-R50x1")."""
from keras_vit.models.resnet import ResNetV2
from keras_vit.models.variants import BIT_DEPTHS
from keras_vit.models.vit import VisionTransformer


def from_reference_config(config, input_shape, **kwargs):
    config = dict(config)
    if "model" in config and str(config["model"]).startswith("BiT-R"):
        depth, width = config["model"][len("BiT-R"):].split("x")
        kwargs.setdefault("classes", config.get("num_classes", 1000))
        return ResNetV2(BIT_DEPTHS[int(depth)], int(width), input_shape=input_shape, **kwargs)
    t = config["transformer"]
    resnet = config.get("resnet")
    classifier = config.get("classifier", "token")
    if classifier not in ("token", "gap"):
        raise ValueError(f"classifier {classifier!r} is not supported; use 'token' or 'gap'")
    num_classes = config.get("num_classes")
    kwargs.setdefault("include_top", bool(num_classes))
    kwargs.setdefault("classes", num_classes or 1000)
    return VisionTransformer(
        patch_size=tuple(config["patches"]["size"]),
        hidden_size=config["hidden_size"],
        mlp_dim=t["mlp_dim"],
        num_heads=t["num_heads"],
        num_layers=t["num_layers"],
        resnet_stages=None if resnet is None else tuple(resnet["num_layers"]),
        resnet_width=1 if resnet is None else resnet["width_factor"],
        pooling=classifier,
        representation_size=config.get("representation_size"),
        dropout_rate=t.get("dropout_rate", 0.0),
        attention_dropout_rate=t.get("attention_dropout_rate", 0.0),
        input_shape=input_shape,
        **kwargs,
    )
