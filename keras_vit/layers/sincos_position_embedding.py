import keras
import numpy as np
from keras import ops


def sincos_2d_table(grid_size, dim, temperature=10_000.0):
    """The fixed 2-D sine-cosine table of later Google ViT code (big_vision):
    [sin(x w), cos(x w), sin(y w), cos(y w)] with D/4 frequencies each."""
    if dim % 4:
        raise ValueError(f"sincos_2d position embeddings need a hidden size divisible by 4, received {dim}")
    gh, gw = grid_size
    y, x = np.mgrid[:gh, :gw]
    quarter = dim // 4
    omega = 1.0 / temperature ** (np.arange(quarter) / max(quarter - 1, 1))
    x = np.einsum("m,d->md", x.reshape(-1), omega)
    y = np.einsum("m,d->md", y.reshape(-1), omega)
    return np.concatenate([np.sin(x), np.cos(x), np.sin(y), np.cos(y)], axis=1).astype("float32")


@keras.saving.register_keras_serializable(package="keras_vit")
class SinCosPositionEmbedding(keras.layers.Layer):
    """Adds the fixed 2-D sine-cosine table; prefix (class) tokens get zeros,
    as big_vision adds position information before prepending them. No
    weights: a new resolution simply recomputes the table."""

    def __init__(self, grid_size, num_prefix_tokens=1, **kwargs):
        super().__init__(**kwargs)
        self.grid_size = tuple(int(g) for g in grid_size)
        self.num_prefix_tokens = int(num_prefix_tokens)

    def build(self, input_shape):
        table = sincos_2d_table(self.grid_size, input_shape[-1])
        prefix = np.zeros((self.num_prefix_tokens, input_shape[-1]), "float32")
        self._table = np.concatenate([prefix, table])[None]

    def call(self, tokens):
        return tokens + ops.cast(self._table, tokens.dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(grid_size=self.grid_size, num_prefix_tokens=self.num_prefix_tokens)
        return config
