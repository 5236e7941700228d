"""Layers of ViT, hybrid ResNet+ViT and BiT ResNetV2: all serializable and
registered under the `keras_vit` package name."""
from keras_vit.layers.attention import MultiHeadDotProductAttention
from keras_vit.layers.bit_root import BiTRoot
from keras_vit.layers.bottleneck import Bottleneck
from keras_vit.layers.class_token import ClassToken
from keras_vit.layers.encoder import TransformerEncoder
from keras_vit.layers.encoder_block import TransformerEncoderBlock, gelu_tanh
from keras_vit.layers.hybrid_root import HybridRoot
from keras_vit.layers.patch_embedding import PatchEmbedding
from keras_vit.layers.posemb_resize import resize_position_embedding
from keras_vit.layers.position_embedding import PositionEmbedding
from keras_vit.layers.position_embedding_2d import PositionEmbedding2D
from keras_vit.layers.relative_position import RelativePositionLogits
from keras_vit.layers.sincos_position_embedding import SinCosPositionEmbedding, sincos_2d_table
from keras_vit.layers.preact_bottleneck import PreActBottleneck
from keras_vit.layers.std_conv import StdConv2D
from keras_vit.layers.token_pooling import TokenPooling

__all__ = [
    "BiTRoot",
    "Bottleneck",
    "ClassToken",
    "HybridRoot",
    "MultiHeadDotProductAttention",
    "PatchEmbedding",
    "PositionEmbedding",
    "PositionEmbedding2D",
    "RelativePositionLogits",
    "SinCosPositionEmbedding",
    "PreActBottleneck",
    "StdConv2D",
    "TokenPooling",
    "TransformerEncoder",
    "TransformerEncoderBlock",
    "gelu_tanh",
    "resize_position_embedding",
    "sincos_2d_table",
]
