import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_vit")
class StdConv2D(keras.layers.Conv2D):
    """Conv2D with weight standardization of the kernel over (h, w, in).

    The two published families standardize differently, and both forms are
    kept exact:
    - hybrid ViT (`epsilon_in_sqrt=False`, eps 1e-5): (w - mean) / (std + eps)
    - BiT (`epsilon_in_sqrt=True`, eps 1e-10): (w - mean) / sqrt(var + eps)
    """

    def __init__(self, *args, epsilon=1e-5, epsilon_in_sqrt=False, **kwargs):
        kwargs.setdefault("use_bias", False)
        # The token and checkpoint layouts are NHWC whatever the global setting.
        kwargs.setdefault("data_format", "channels_last")
        super().__init__(*args, **kwargs)
        self.epsilon = float(epsilon)
        self.epsilon_in_sqrt = bool(epsilon_in_sqrt)

    def standardized_kernel(self, kernel):
        kernel = ops.convert_to_tensor(kernel)
        if keras.backend.standardize_dtype(kernel.dtype) in ("float16", "bfloat16"):
            # Statistics in float32: low precision cannot hold eps 1e-10.
            kernel = ops.cast(kernel, "float32")
        mean, var = ops.moments(kernel, axes=(0, 1, 2), keepdims=True)
        if self.epsilon_in_sqrt:
            return (kernel - mean) * ops.rsqrt(var + self.epsilon)
        return (kernel - mean) / (ops.sqrt(var) + self.epsilon)

    def convolution_op(self, inputs, kernel):
        kernel = ops.cast(self.standardized_kernel(kernel), inputs.dtype)
        return super().convolution_op(inputs, kernel)

    def get_config(self):
        config = super().get_config()
        config.update(epsilon=self.epsilon, epsilon_in_sqrt=self.epsilon_in_sqrt)
        return config
