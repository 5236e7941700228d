import logging

import keras
import numpy as np
from keras import ops

from keras_vit.layers.posemb_resize import METHODS, infer_square_grid, resize_position_embedding

logger = logging.getLogger("keras_vit")


@keras.saving.register_keras_serializable(package="keras_vit")
class PositionEmbedding(keras.layers.Layer):
    """Adds a learned 1-D position embedding of shape
    `(1, num_prefix_tokens + gh*gw, D)` to a token sequence.

    Weights saved at another patch grid (`.weights.h5`, `.keras`) are resized
    on load with `resize_position_embedding(method=resize_method)`; the
    default `"linear"` is the reference's corner-aligned zoom.
    """

    def __init__(self, grid_size, num_prefix_tokens=1, resize_method="linear", **kwargs):
        super().__init__(**kwargs)
        self.grid_size = tuple(int(g) for g in grid_size)
        self.num_prefix_tokens = int(num_prefix_tokens)
        if resize_method not in METHODS:
            raise ValueError(f"resize_method must be one of {METHODS}, received {resize_method!r}")
        self.resize_method = resize_method

    @property
    def num_tokens(self):
        return self.num_prefix_tokens + self.grid_size[0] * self.grid_size[1]

    def build(self, input_shape):
        if input_shape[1] is not None and input_shape[1] != self.num_tokens:
            raise ValueError(
                f"PositionEmbedding for grid {self.grid_size} with {self.num_prefix_tokens} "
                f"prefix token(s) expects {self.num_tokens} tokens, received {input_shape[1]}"
            )
        self.pos_embedding = self.add_weight(
            shape=(1, self.num_tokens, input_shape[-1]),
            initializer=keras.initializers.RandomNormal(stddev=0.02),
            name="pos_embedding",
        )

    def call(self, tokens):
        return tokens + ops.cast(self.pos_embedding, tokens.dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def resized(self, posemb, old_grid):
        """Returns `posemb` (saved at `old_grid`) fitted to this layer's grid."""
        posemb = np.asarray(posemb)
        if old_grid is None:
            old_grid = infer_square_grid(posemb.shape[1] - self.num_prefix_tokens)
            if old_grid is None:
                raise ValueError(
                    f"cannot resize position embedding of shape {posemb.shape}: its "
                    f"{posemb.shape[1] - self.num_prefix_tokens} grid tokens do not form a "
                    "square grid and the file does not record the grid"
                )
        if posemb.shape[-1] != self.pos_embedding.shape[-1]:
            raise ValueError(
                f"position embedding width {posemb.shape[-1]} does not match the model's "
                f"{self.pos_embedding.shape[-1]}"
            )
        old_grid = tuple(int(g) for g in old_grid)
        if old_grid != self.grid_size:
            logger.warning(
                "Resizing position embedding from grid %s to %s (%s). Fine-tune after "
                "resizing: accuracy drops without it.", old_grid, self.grid_size, self.resize_method,
            )
        return resize_position_embedding(
            posemb, old_grid, self.grid_size, self.num_prefix_tokens, self.resize_method
        )

    def save_own_variables(self, store):
        store["0"] = self.pos_embedding
        store["grid_size"] = np.asarray(self.grid_size, dtype="int64")

    def load_own_variables(self, store):
        posemb = store["0"]
        old_grid = tuple(store["grid_size"]) if "grid_size" in store else None
        self.pos_embedding.assign(self.resized(posemb, old_grid))

    def get_config(self):
        config = super().get_config()
        config.update(
            grid_size=self.grid_size,
            num_prefix_tokens=self.num_prefix_tokens,
            resize_method=self.resize_method,
        )
        return config
