import logging

import keras
import numpy as np
from keras import ops

from keras_vit.layers.posemb_resize import _linear_matrix

logger = logging.getLogger("keras_vit")


@keras.saving.register_keras_serializable(package="keras_vit")
class RelativePositionLogits(keras.layers.Layer):
    """1-D relative attention (paper, Appendix D.4): one learned embedding
    per offset q - k in the token sequence, per head. The queries attend to
    these embeddings as keys; the resulting logits, (B, heads, T, T), bias the
    content attention before its softmax.

    Weights saved for another sequence length are re-indexed on load: offset
    d of the new table reads offset d * (T_old - 1) / (T_new - 1) of the old
    one, linearly interpolated.
    """

    def __init__(self, num_tokens, num_heads, **kwargs):
        super().__init__(**kwargs)
        self.num_tokens = int(num_tokens)
        self.num_heads = int(num_heads)

    def build(self, query_shape):
        head_dim = query_shape[-1]
        self.relative_embedding = self.add_weight(
            shape=(2 * self.num_tokens - 1, self.num_heads, head_dim),
            initializer=keras.initializers.RandomNormal(stddev=0.02),
            name="relative_embedding",
        )
        t = np.arange(self.num_tokens)
        offsets = t[:, None] - t[None, :] + self.num_tokens - 1
        # Row q of the (T, 2T-1) per-offset logits, flattened: q*(2T-1) + offset.
        self._flat_index = (t[:, None] * (2 * self.num_tokens - 1) + offsets).astype("int32")

    def call(self, query):
        """query (B, Q, heads, head_dim), already scaled, for the first Q <= T
        tokens -> (B, heads, Q, T)."""
        table = ops.cast(self.relative_embedding, query.dtype)
        per_offset = ops.einsum("bqhd,rhd->bhqr", query, table)
        shape = ops.shape(per_offset)
        flat = ops.reshape(per_offset, (shape[0], shape[1], -1))
        return ops.take(flat, self._flat_index[: query.shape[1]], axis=-1)

    def load_own_variables(self, store):
        table = np.asarray(store["0"])
        old = (table.shape[0] + 1) // 2
        if old != self.num_tokens:
            logger.warning("Re-indexing relative position embeddings from %d to %d tokens.", old, self.num_tokens)
            flat = table.reshape(table.shape[0], -1)
            table = (_linear_matrix(table.shape[0], 2 * self.num_tokens - 1) @ flat).reshape(
                (2 * self.num_tokens - 1,) + table.shape[1:]
            )
        self.relative_embedding.assign(table)

    def get_config(self):
        config = super().get_config()
        config.update(num_tokens=self.num_tokens, num_heads=self.num_heads)
        return config
