import keras
from keras import ops

from keras_vit.layers.std_conv import StdConv2D


@keras.saving.register_keras_serializable(package="keras_vit")
class Bottleneck(keras.layers.Layer):
    """Post-activation bottleneck unit of the hybrid ViT's ResNet
    (vision_transformer's `ResidualUnit`):
    relu(residual + gn3(conv3(relu(gn2(conv2(relu(gn1(conv1(x)))))))))
    with the stride on the 3x3 conv, SAME padding, StdConv eps 1e-5 and
    GroupNorm(32, eps 1e-6); `gn3` starts at zero scale. A projection
    (1x1 conv + GN) is made when the width or the stride changes.
    """

    def __init__(self, features, strides=1, groups=32, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.features = int(features)
        self.strides = int(strides)
        self.groups = int(groups)
        self.epsilon = float(epsilon)
        policy = self.dtype_policy
        f = self.features

        def conv(filters, kernel, strides, name):
            return StdConv2D(filters, kernel, strides=strides, padding="same", epsilon=1e-5, dtype=policy, name=name)

        def norm(name, zero=False):
            return keras.layers.GroupNormalization(
                groups=self.groups, epsilon=self.epsilon, gamma_initializer="zeros" if zero else "ones",
                dtype=policy, name=name,
            )

        self.conv1, self.gn1 = conv(f, 1, 1, "conv1"), norm("gn1")
        self.conv2, self.gn2 = conv(f, 3, self.strides, "conv2"), norm("gn2")
        self.conv3, self.gn3 = conv(4 * f, 1, 1, "conv3"), norm("gn3", zero=True)
        self._conv_factory, self._norm_factory = conv, norm
        self.conv_proj = self.gn_proj = None

    def build(self, input_shape):
        f = self.features
        if input_shape[-1] != 4 * f or self.strides != 1:
            self.conv_proj = self._conv_factory(4 * f, 1, self.strides, "conv_proj")
            self.gn_proj = self._norm_factory("gn_proj")
            self.conv_proj.build(input_shape)
            self.gn_proj.build(self.conv_proj.compute_output_shape(input_shape))
        shape = input_shape
        for conv, gn in ((self.conv1, self.gn1), (self.conv2, self.gn2), (self.conv3, self.gn3)):
            conv.build(shape)
            shape = conv.compute_output_shape(shape)
            gn.build(shape)

    def call(self, x):
        residual = x
        if self.conv_proj is not None:
            residual = self.gn_proj(self.conv_proj(x))
        y = ops.relu(self.gn1(self.conv1(x)))
        y = ops.relu(self.gn2(self.conv2(y)))
        y = self.gn3(self.conv3(y))
        return ops.relu(residual + y)

    def compute_output_shape(self, input_shape):
        return self.conv3.compute_output_shape(self.conv2.compute_output_shape(
            self.conv1.compute_output_shape(input_shape)))

    def get_config(self):
        config = super().get_config()
        config.update(features=self.features, strides=self.strides, groups=self.groups, epsilon=self.epsilon)
        return config
