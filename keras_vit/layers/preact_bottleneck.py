import keras
from keras import ops

from keras_vit.layers.std_conv import StdConv2D


@keras.saving.register_keras_serializable(package="keras_vit")
class PreActBottleneck(keras.layers.Layer):
    """BiT ResNetV2 pre-activation bottleneck (big_transfer):
    out = relu(gn_a(x)); residual = proj(out) if projecting else x;
    y = conv_a(out); y = conv_b(relu(gn_b(y))); y = conv_c(relu(gn_c(y)));
    return y + residual.
    The stride is on the 3x3 conv, padded by 1 on every side (PyTorch style,
    not TF SAME); StdConv eps 1e-10 inside the sqrt; GroupNorm(32, eps 1e-5).
    """

    def __init__(self, filters, middle_filters=None, strides=1, groups=32, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.filters = int(filters)
        self.middle_filters = int(middle_filters or filters // 4)
        self.strides = int(strides)
        self.groups = int(groups)
        self.epsilon = float(epsilon)
        policy = self.dtype_policy
        mid = self.middle_filters

        def conv(filters, kernel, strides, name):
            return StdConv2D(
                filters, kernel, strides=strides, padding="valid", epsilon=1e-10, epsilon_in_sqrt=True,
                dtype=policy, name=name,
            )

        def norm(name):
            return keras.layers.GroupNormalization(groups=self.groups, epsilon=self.epsilon, dtype=policy, name=name)

        self.gn_a, self.conv_a = norm("gn_a"), conv(mid, 1, 1, "conv_a")
        self.gn_b, self.conv_b = norm("gn_b"), conv(mid, 3, self.strides, "conv_b")
        self.gn_c, self.conv_c = norm("gn_c"), conv(self.filters, 1, 1, "conv_c")
        self._conv_factory = conv
        self.proj = None

    def build(self, input_shape):
        self.gn_a.build(input_shape)
        if input_shape[-1] != self.filters or self.strides != 1:
            self.proj = self._conv_factory(self.filters, 1, self.strides, "proj")
            self.proj.build(input_shape)
        self.conv_a.build(input_shape)
        mid_shape = tuple(input_shape[:-1]) + (self.middle_filters,)
        self.gn_b.build(mid_shape)
        padded = tuple(None if n is None else n + 2 for n in mid_shape[1:3])
        self.conv_b.build((mid_shape[0],) + padded + (self.middle_filters,))
        out_shape = self.compute_output_shape(input_shape)[:3] + (self.middle_filters,)
        self.gn_c.build(out_shape)
        self.conv_c.build(out_shape)

    def call(self, x):
        out = ops.relu(self.gn_a(x))
        residual = self.proj(out) if self.proj is not None else x
        y = self.conv_a(out)
        y = ops.relu(self.gn_b(y))
        y = self.conv_b(ops.pad(y, ((0, 0), (1, 1), (1, 1), (0, 0))))
        y = self.conv_c(ops.relu(self.gn_c(y)))
        return y + residual

    def compute_output_shape(self, input_shape):
        def down(n):
            return None if n is None else (n + 2 - 3) // self.strides + 1

        return (input_shape[0], down(input_shape[1]), down(input_shape[2]), self.filters)

    def get_config(self):
        config = super().get_config()
        config.update(
            filters=self.filters,
            middle_filters=self.middle_filters,
            strides=self.strides,
            groups=self.groups,
            epsilon=self.epsilon,
        )
        return config
