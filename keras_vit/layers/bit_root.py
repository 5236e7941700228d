import keras
from keras import ops

from keras_vit.layers.std_conv import StdConv2D


@keras.saving.register_keras_serializable(package="keras_vit")
class BiTRoot(keras.layers.Layer):
    """Root of BiT ResNetV2 (stride 4, no normalization):
    zero-pad 3 -> StdConv 7x7/2 VALID (eps 1e-10 inside the sqrt) ->
    zero-pad 1 -> max-pool 3x3/2 VALID, exactly as big_transfer."""

    def __init__(self, filters=64, **kwargs):
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.conv = StdConv2D(
            self.filters, 7, strides=2, padding="valid", epsilon=1e-10, epsilon_in_sqrt=True,
            dtype=self.dtype_policy, name="standardized_conv2d",
        )
        self.pool = keras.layers.MaxPooling2D(3, strides=2, padding="valid", data_format="channels_last", dtype=self.dtype_policy)

    def build(self, input_shape):
        self.conv.build(input_shape)

    def call(self, x):
        x = self.conv(ops.pad(x, ((0, 0), (3, 3), (3, 3), (0, 0))))
        # Zero padding (not -inf) before the pool, as the reference.
        return self.pool(ops.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))))

    def compute_output_shape(self, input_shape):
        def size(n):
            if n is None:
                return None
            n = (n + 6 - 7) // 2 + 1
            return (n + 2 - 3) // 2 + 1

        return (input_shape[0], size(input_shape[1]), size(input_shape[2]), self.filters)

    def get_config(self):
        config = super().get_config()
        config.update(filters=self.filters)
        return config
