"""Model builders and the registry of named builders."""
from keras_vit.models.resnet import (
    BIT_BUILDERS,
    BiT_R50x1,
    BiT_R50x3,
    BiT_R101x1,
    BiT_R101x3,
    BiT_R152x2,
    BiT_R152x4,
    ResNetV2,
)
from keras_vit.models.reference_config import from_reference_config
from keras_vit.models.variants import closest, decode_variant
from keras_vit.models.vit import (
    VIT_BUILDERS,
    R26_ViT_B32,
    R26_ViT_S32,
    R50_ViT_B16,
    R50_ViT_L32,
    R_ViT_Ti16,
    ViT_B8,
    ViT_B16,
    ViT_B32,
    ViT_H14,
    ViT_L16,
    ViT_L32,
    ViT_S16,
    ViT_S32,
    ViT_Ti16,
    VisionTransformer,
)

MODELS = {**VIT_BUILDERS, **BIT_BUILDERS}


def get_builder(name):
    """The builder called `name` (e.g. "ViT_B16"); a clear error otherwise."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}.{closest(name, list(MODELS))} Known models: {', '.join(MODELS)}")
    return MODELS[name]
