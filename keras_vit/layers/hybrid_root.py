import keras
from keras import ops

from keras_vit.layers.std_conv import StdConv2D


@keras.saving.register_keras_serializable(package="keras_vit")
class HybridRoot(keras.layers.Layer):
    """Root of the hybrid ViT's ResNet (post-activation, stride 4):
    StdConv 7x7/2 SAME (eps 1e-5, no bias) -> GroupNorm(32, 1e-6) -> ReLU ->
    max-pool 3x3/2 SAME."""

    def __init__(self, filters=64, groups=32, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.groups = int(groups)
        self.epsilon = float(epsilon)
        self.conv_root = StdConv2D(
            self.filters, 7, strides=2, padding="same", epsilon=1e-5, dtype=self.dtype_policy, name="conv_root"
        )
        self.gn_root = keras.layers.GroupNormalization(
            groups=self.groups, epsilon=self.epsilon, dtype=self.dtype_policy, name="gn_root"
        )
        self.pool = keras.layers.MaxPooling2D(3, strides=2, padding="same", data_format="channels_last", dtype=self.dtype_policy)

    def build(self, input_shape):
        self.conv_root.build(input_shape)
        self.gn_root.build(self.conv_root.compute_output_shape(input_shape))

    def call(self, x):
        return self.pool(ops.relu(self.gn_root(self.conv_root(x))))

    def compute_output_shape(self, input_shape):
        return self.pool.compute_output_shape(self.conv_root.compute_output_shape(input_shape))

    def get_config(self):
        config = super().get_config()
        config.update(filters=self.filters, groups=self.groups, epsilon=self.epsilon)
        return config
