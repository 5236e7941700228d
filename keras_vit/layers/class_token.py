import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_vit")
class ClassToken(keras.layers.Layer):
    """Prepends a learned `[class]` token (zero-initialized, shape (1, 1, D))
    to a token sequence, as the reference's `cls` parameter."""

    def build(self, input_shape):
        self.cls = self.add_weight(
            shape=(1, 1, input_shape[-1]), initializer="zeros", name="cls"
        )

    def call(self, tokens):
        cls = ops.cast(self.cls, tokens.dtype)
        cls = ops.broadcast_to(cls, (ops.shape(tokens)[0], 1, ops.shape(tokens)[-1]))
        return ops.concatenate([cls, tokens], axis=1)

    def compute_output_shape(self, input_shape):
        n = None if input_shape[1] is None else input_shape[1] + 1
        return (input_shape[0], n, input_shape[2])
