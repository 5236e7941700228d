import keras
from keras import ops

POOLINGS = ("token", "gap")


@keras.saving.register_keras_serializable(package="keras_vit")
class TokenPooling(keras.layers.Layer):
    """Reduces a token sequence to one vector: the class token (`"token"`,
    position 0) or the mean of all tokens (`"gap"`)."""

    def __init__(self, pooling="token", **kwargs):
        super().__init__(**kwargs)
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, received {pooling!r}")
        self.pooling = pooling

    def call(self, tokens):
        if self.pooling == "token":
            return tokens[:, 0]
        return ops.mean(tokens, axis=1)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[-1])

    def get_config(self):
        config = super().get_config()
        config.update(pooling=self.pooling)
        return config
