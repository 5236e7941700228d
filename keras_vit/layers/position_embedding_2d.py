import logging

import keras
import numpy as np
from keras import ops

from keras_vit.layers.posemb_resize import _linear_matrix

logger = logging.getLogger("keras_vit")


@keras.saving.register_keras_serializable(package="keras_vit")
class PositionEmbedding2D(keras.layers.Layer):
    """Learned 2-D position embedding (paper, Appendix D.4): an X embedding
    per column and a Y embedding per row, D/2 wide each, concatenated per
    patch as [X, Y]; prefix (class) tokens get their own learned rows.
    Weights saved at another grid are resized per axis on load (linear,
    corner-aligned, as the 1-D grid resize)."""

    def __init__(self, grid_size, num_prefix_tokens=1, **kwargs):
        super().__init__(**kwargs)
        self.grid_size = tuple(int(g) for g in grid_size)
        self.num_prefix_tokens = int(num_prefix_tokens)

    def build(self, input_shape):
        dim = input_shape[-1]
        if dim % 2:
            raise ValueError(f"learned_2d position embeddings need an even hidden size, received {dim}")
        init = keras.initializers.RandomNormal(stddev=0.02)
        gh, gw = self.grid_size
        self.x_embedding = self.add_weight(shape=(gw, dim // 2), initializer=init, name="x_embedding")
        self.y_embedding = self.add_weight(shape=(gh, dim // 2), initializer=init, name="y_embedding")
        self.prefix_embedding = self.add_weight(
            shape=(self.num_prefix_tokens, dim), initializer=init, name="prefix_embedding"
        )

    def table(self):
        gh, gw = self.grid_size
        half = self.x_embedding.shape[-1]
        x = ops.broadcast_to(self.x_embedding[None, :, :], (gh, gw, half))
        y = ops.broadcast_to(self.y_embedding[:, None, :], (gh, gw, half))
        grid = ops.reshape(ops.concatenate([x, y], axis=-1), (gh * gw, 2 * half))
        return ops.concatenate([self.prefix_embedding, grid], axis=0)[None]

    def call(self, tokens):
        return tokens + ops.cast(self.table(), tokens.dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def save_own_variables(self, store):
        store["x"], store["y"], store["prefix"] = self.x_embedding, self.y_embedding, self.prefix_embedding

    def load_own_variables(self, store):
        x, y = np.asarray(store["x"]), np.asarray(store["y"])
        if (y.shape[0], x.shape[0]) != self.grid_size:
            logger.warning("Resizing 2-D position embedding from grid %s to %s.", (y.shape[0], x.shape[0]),
                           self.grid_size)
        self.x_embedding.assign(_linear_matrix(x.shape[0], self.grid_size[1]) @ x)
        self.y_embedding.assign(_linear_matrix(y.shape[0], self.grid_size[0]) @ y)
        self.prefix_embedding.assign(store["prefix"])

    def get_config(self):
        config = super().get_config()
        config.update(grid_size=self.grid_size, num_prefix_tokens=self.num_prefix_tokens)
        return config
