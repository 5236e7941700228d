import math

import keras
from keras import ops

from keras_vit.layers.relative_position import RelativePositionLogits


@keras.saving.register_keras_serializable(package="keras_vit")
class MultiHeadDotProductAttention(keras.layers.Layer):
    """Multi-head self-attention with the reference's parameter layout:
    query/key/value kernels `(D, heads, head_dim)` with biases
    `(heads, head_dim)`, output kernel `(heads, head_dim, D)`.

    The attention itself goes through `keras.ops.dot_product_attention`, so a
    backend's fused or flash kernel is used where it has one. Attention
    dropout while training, and returning the attention weights, need the
    probabilities explicitly and take the unfused path.
    """

    def __init__(self, num_heads, attention_dropout_rate=0.0, flash_attention=None, relative_positions=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.num_heads = int(num_heads)
        # Sequence length for 1-D relative attention logits; None: no bias.
        self.relative_positions = None if relative_positions is None else int(relative_positions)
        self.relative = None
        self.attention_dropout_rate = float(attention_dropout_rate)
        self.flash_attention = flash_attention
        self.dropout = keras.layers.Dropout(self.attention_dropout_rate, dtype=self.dtype_policy)

    def build(self, input_shape):
        dim = input_shape[-1]
        if dim % self.num_heads:
            raise ValueError(
                f"hidden size {dim} is not divisible by num_heads={self.num_heads}"
            )
        self.hidden_size = dim
        self.head_dim = dim // self.num_heads
        h, d = self.num_heads, self.head_dim
        for proj in ("query", "key", "value"):
            kernel = self.add_weight(
                shape=(dim, h, d), initializer=_glorot_2d((dim, h * d)), name=f"{proj}_kernel"
            )
            bias = self.add_weight(shape=(h, d), initializer="zeros", name=f"{proj}_bias")
            setattr(self, f"{proj}_kernel", kernel)
            setattr(self, f"{proj}_bias", bias)
        self.out_kernel = self.add_weight(
            shape=(h, d, dim), initializer=_glorot_2d((h * d, dim)), name="out_kernel"
        )
        self.out_bias = self.add_weight(shape=(dim,), initializer="zeros", name="out_bias")
        if self.relative_positions is not None:
            self.relative = RelativePositionLogits(
                self.relative_positions, h, dtype=self.dtype_policy, name="relative"
            )
            self.relative.build((None, self.relative_positions, h, d))

    def _project(self, x, proj):
        kernel = ops.reshape(getattr(self, f"{proj}_kernel"), (self.hidden_size, -1))
        y = ops.matmul(x, ops.cast(kernel, x.dtype))
        y = y + ops.cast(ops.reshape(getattr(self, f"{proj}_bias"), (-1,)), x.dtype)
        shape = ops.shape(x)
        return ops.reshape(y, (shape[0], shape[1], self.num_heads, self.head_dim))

    def call(self, x, training=None, return_attention_scores=False, query_tokens=None):
        """`query_tokens=n`: only the first n tokens attend (to all tokens);
        the output is (B, n, D)."""
        q = self._project(x if query_tokens is None else x[:, :query_tokens], "query")
        k, v = (self._project(x, p) for p in ("key", "value"))
        scale = 1.0 / math.sqrt(self.head_dim)
        bias = None
        if self.relative is not None:
            bias = self.relative(q * ops.cast(scale, q.dtype))
        explicit = return_attention_scores or (training and self.attention_dropout_rate > 0)
        if explicit:
            logits = ops.einsum("bqhd,bkhd->bhqk", q, k) * ops.cast(scale, q.dtype)
            if bias is not None:
                logits = logits + bias
            # Softmax in float32 keeps mixed precision stable.
            probs = ops.cast(ops.softmax(ops.cast(logits, "float32"), axis=-1), q.dtype)
            dropped = self.dropout(probs, training=training)
            out = ops.einsum("bhqk,bkhd->bqhd", dropped, v)
        else:
            out = ops.dot_product_attention(q, k, v, bias=bias, flash_attention=self.flash_attention)
        shape = ops.shape(out)
        out = ops.reshape(out, (shape[0], shape[1], self.hidden_size))
        out_kernel = ops.cast(ops.reshape(self.out_kernel, (self.hidden_size, self.hidden_size)), x.dtype)
        out = ops.matmul(out, out_kernel) + ops.cast(self.out_bias, x.dtype)
        if return_attention_scores:
            return out, probs
        return out

    def compute_output_shape(self, input_shape, query_tokens=None):
        if query_tokens is None:
            return input_shape
        return (input_shape[0], query_tokens, input_shape[2])

    def get_config(self):
        config = super().get_config()
        config.update(
            num_heads=self.num_heads,
            attention_dropout_rate=self.attention_dropout_rate,
            flash_attention=self.flash_attention,
            relative_positions=self.relative_positions,
        )
        return config


def _glorot_2d(shape_2d):
    """Xavier-uniform over the flattened (fan_in, fan_out) matrix, as Flax
    initializes its DenseGeneral kernels, then reshaped to the 3-D layout."""
    glorot = keras.initializers.GlorotUniform()

    def init(shape, dtype=None):
        return ops.reshape(glorot(shape_2d, dtype=dtype), shape)

    return init
