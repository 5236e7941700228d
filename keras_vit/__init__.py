"""keras_vit: ViT, hybrid ResNet+ViT and BiT ResNetV2 for Keras 3, loading
the authors' published checkpoints exactly on every backend."""
from keras_vit import layers
from keras_vit.models import (
    MODELS,
    BiT_R50x1,
    BiT_R50x3,
    BiT_R101x1,
    BiT_R101x3,
    BiT_R152x2,
    BiT_R152x4,
    R26_ViT_B32,
    R26_ViT_S32,
    R50_ViT_B16,
    R50_ViT_L32,
    R_ViT_Ti16,
    ResNetV2,
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
    decode_variant,
    from_reference_config,
    get_builder,
)
from keras_vit.weights import (
    WeightsError,
    WeightsMismatchError,
    list_presets,
    load_weights,
    save_npz,
)
from keras_vit.layers.posemb_resize import resize_position_embedding

__version__ = "0.1.0"
