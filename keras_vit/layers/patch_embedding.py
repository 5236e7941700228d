import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_vit")
class PatchEmbedding(keras.layers.Layer):
    """Cuts an image (or feature map) into non-overlapping PxP patches and
    projects each to `hidden_size`, returning a `(batch, tokens, hidden_size)`
    sequence in raster order.

    The projection is a VALID convolution with kernel = stride = patch size,
    stored HWIO exactly as the reference's `embedding/kernel`.
    """

    def __init__(self, hidden_size, patch_size, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = int(hidden_size)
        self.patch_size = _pair(patch_size)
        self.projection = keras.layers.Conv2D(
            self.hidden_size,
            self.patch_size,
            strides=self.patch_size,
            padding="valid",
            data_format="channels_last",
            kernel_initializer="lecun_normal",
            dtype=self.dtype_policy,
            name="projection",
        )

    def build(self, input_shape):
        self.projection.build(input_shape)

    def grid_size(self, input_shape):
        h, w = input_shape[1], input_shape[2]
        ph, pw = self.patch_size
        return (None if h is None else h // ph, None if w is None else w // pw)

    def call(self, images):
        x = self.projection(images)
        shape = ops.shape(x)
        return ops.reshape(x, (shape[0], shape[1] * shape[2], self.hidden_size))

    def compute_output_shape(self, input_shape):
        gh, gw = self.grid_size(input_shape)
        n = None if gh is None or gw is None else gh * gw
        return (input_shape[0], n, self.hidden_size)

    def get_config(self):
        config = super().get_config()
        config.update(hidden_size=self.hidden_size, patch_size=self.patch_size)
        return config


def _pair(value):
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError(f"patch_size must be an int or a pair, received {value!r}")
    return value
