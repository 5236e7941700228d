import contextlib

import keras
from keras import ops

from keras_vit import xla_cpu
from keras_vit.layers.attention import MultiHeadDotProductAttention


def gelu_tanh(x):
    """GELU, tanh approximation: the reference's (Flax `nn.gelu`) form."""
    return ops.gelu(x, approximate=True)


@keras.saving.register_keras_serializable(package="keras_vit")
class TransformerEncoderBlock(keras.layers.Layer):
    """Pre-LN encoder block of the paper (eq. 2-3):
    `x + Drop(MHA(LN(x)))`, then `x + MLP(LN(x))` with
    MLP = Dense(mlp_dim) -> GELU(tanh) -> Drop -> Dense(D) -> Drop.
    LayerNorm eps is 1e-6 as in the reference.

    `remat=True` recomputes the block's activations in the backward pass
    instead of keeping them (`keras.remat`), trading about a third more
    compute for memory. Dropout seeds are drawn before the recomputed
    function, so the backward pass sees the masks of the forward pass.

    `query_tokens=n` computes only the first n tokens' outputs, (B, n, D):
    they attend to every token, but the other tokens' queries, attention
    output and MLP are skipped. A classifier's last block needs only the
    class token, so the builders set n=1 there: all of that block but the
    key and value projections is done for one token instead of 197, 7% of
    ViT-B/16's FLOPs, for the same logits.
    """

    def __init__(
        self,
        num_heads,
        mlp_dim,
        dropout_rate=0.0,
        attention_dropout_rate=0.0,
        layer_norm_epsilon=1e-6,
        flash_attention=None,
        relative_positions=None,
        remat=False,
        query_tokens=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.remat = bool(remat)
        if query_tokens is not None and (isinstance(query_tokens, bool) or not isinstance(query_tokens, int)
                                         or query_tokens < 1):
            raise ValueError(f"query_tokens must be None or a positive int, received {query_tokens!r}")
        self.query_tokens = query_tokens
        if self.remat:
            xla_cpu.warn_if_remat_saves_nothing()
        self.num_heads = int(num_heads)
        self.mlp_dim = int(mlp_dim)
        self.dropout_rate = float(dropout_rate)
        self.attention_dropout_rate = float(attention_dropout_rate)
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.flash_attention = flash_attention
        self.relative_positions = relative_positions
        policy = self.dtype_policy
        self.norm_1 = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=policy, name="norm_1")
        self.attention = MultiHeadDotProductAttention(
            num_heads, attention_dropout_rate, flash_attention=flash_attention,
            relative_positions=relative_positions, dtype=policy, name="attention",
        )
        self.norm_2 = keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=policy, name="norm_2")
        bias_init = keras.initializers.RandomNormal(stddev=1e-6)
        self.mlp_dense_1 = keras.layers.Dense(
            mlp_dim, kernel_initializer="glorot_uniform", bias_initializer=bias_init, dtype=policy, name="mlp_dense_1"
        )
        self.mlp_dense_2 = None  # width known at build
        self._bias_init = bias_init
        self.dropout = keras.layers.Dropout(dropout_rate, dtype=policy)

    def build(self, input_shape):
        dim = input_shape[-1]
        self.norm_1.build(input_shape)
        self.attention.build(input_shape)
        self.norm_2.build(input_shape)
        self.mlp_dense_1.build(input_shape)
        self.mlp_dense_2 = keras.layers.Dense(
            dim,
            kernel_initializer="glorot_uniform",
            bias_initializer=self._bias_init,
            dtype=self.dtype_policy,
            name="mlp_dense_2",
        )
        self.mlp_dense_2.build(tuple(input_shape[:-1]) + (self.mlp_dim,))

    def call(self, x, training=None, return_attention_scores=False):
        if not training or return_attention_scores:
            return self._forward(x, training, return_attention_scores)
        # One seed per dropout layer per call, drawn outside the (possibly
        # recomputed) body: a recomputation then replays the forward pass's
        # masks, and remat on or off trains identically.
        generators = [layer.seed_generator for layer in (self.dropout, self.attention.dropout) if layer.rate > 0]
        seeds = [g.next() for g in generators]

        def forward(x):
            with contextlib.ExitStack() as stack:
                for generator, seed in zip(generators, seeds):
                    stack.enter_context(_replayed(generator, seed))
                return self._forward(x, True, False)

        # keras.RematScope would wrap `call` itself, which tf.recompute_grad
        # rejects in graph mode (no keyword arguments such as `training`).
        out = keras.remat(forward)(x) if self.remat else forward(x)
        return gradient_barrier(out) if _xla_on_cpu() else out

    def _forward(self, x, training, return_attention_scores):
        y = self.norm_1(x)
        n = self.query_tokens
        if return_attention_scores:
            y, scores = self.attention(y, training=training, return_attention_scores=True, query_tokens=n)
        else:
            y = self.attention(y, training=training, query_tokens=n)
        x = (x if n is None else x[:, :n]) + self.dropout(y, training=training)
        y = self.norm_2(x)
        y = gelu_tanh(self.mlp_dense_1(y))
        y = self.dropout(y, training=training)
        y = self.dropout(self.mlp_dense_2(y), training=training)
        out = x + y
        if return_attention_scores:
            return out, scores
        return out

    def compute_output_shape(self, input_shape):
        if self.query_tokens is None:
            return input_shape
        return (input_shape[0], self.query_tokens, input_shape[2])

    def get_config(self):
        config = super().get_config()
        config.update(
            num_heads=self.num_heads,
            mlp_dim=self.mlp_dim,
            dropout_rate=self.dropout_rate,
            attention_dropout_rate=self.attention_dropout_rate,
            layer_norm_epsilon=self.layer_norm_epsilon,
            flash_attention=self.flash_attention,
            relative_positions=self.relative_positions,
            remat=self.remat,
            query_tokens=self.query_tokens,
        )
        return config


def _xla_on_cpu():
    """Whether blocks need `gradient_barrier`: only XLA on CPU duplicates the
    fusions. On an accelerator its conditional would cost a device-to-host
    sync per block, and eager PyTorch has no fusions to separate."""
    return keras.backend.backend() in ("jax", "tensorflow") and xla_cpu.cpu_only()


@ops.custom_gradient
def gradient_barrier(x):
    """Identity whose gradient is materialized between blocks.

    Without it, XLA on CPU fuses the residual stream's gradient sums into
    every consumer, so each block's LayerNorm backward is recomputed by all
    the blocks above it: quadratic in depth, 2.4 s of a 6.5 s ViT-S/16 JAX
    step. The conditional on the gradient's own values is a boundary that no
    fusion crosses (and that no compiler can fold); both branches are the
    identity, so gradients are unchanged to the bit.
    """

    def grad(*args, upstream=None):
        if upstream is None:
            (upstream,) = args
        keep = ops.isfinite(ops.sum(upstream[:1, :1, :1]))
        return ops.cond(keep, lambda: upstream * 1.0, lambda: upstream)

    return x, grad


@contextlib.contextmanager
def _replayed(generator, seed):
    """Makes `generator` hand out `seed`, `seed + (0, 1)`, ... (the same
    sequence every time the context is entered) instead of advancing its
    state: the recomputed forward pass then redraws identical masks."""
    count = [0]

    def next_seed(ordered=True):
        count[0] += 1
        return ops.add(seed, ops.cast([0, count[0] - 1], seed.dtype))

    generator.next = next_seed
    try:
        yield
    finally:
        del generator.next
