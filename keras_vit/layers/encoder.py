import keras

from keras_vit.layers.encoder_block import TransformerEncoderBlock


@keras.saving.register_keras_serializable(package="keras_vit")
class TransformerEncoder(keras.layers.Layer):
    """A stack of `num_layers` pre-LN encoder blocks followed by the final
    LayerNorm (`encoder_norm`), for users composing their own models.

    The model builders place the blocks in the functional graph instead, so
    that intermediate tokens and attention maps can be read off by name (a
    classifier's last block computes the class token only; a model built with
    `include_top=False` has every token of it).
    """

    def __init__(
        self,
        num_layers,
        num_heads,
        mlp_dim,
        dropout_rate=0.0,
        attention_dropout_rate=0.0,
        layer_norm_epsilon=1e-6,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.num_layers = int(num_layers)
        self.num_heads = int(num_heads)
        self.mlp_dim = int(mlp_dim)
        self.dropout_rate = float(dropout_rate)
        self.attention_dropout_rate = float(attention_dropout_rate)
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.blocks = [
            TransformerEncoderBlock(
                num_heads,
                mlp_dim,
                dropout_rate,
                attention_dropout_rate,
                layer_norm_epsilon,
                dtype=self.dtype_policy,
                name=f"encoderblock_{i}",
            )
            for i in range(self.num_layers)
        ]
        self.encoder_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="encoder_norm"
        )

    def build(self, input_shape):
        for block in self.blocks:
            block.build(input_shape)
        self.encoder_norm.build(input_shape)

    def call(self, x, training=None):
        for block in self.blocks:
            x = block(x, training=training)
        return self.encoder_norm(x)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            num_layers=self.num_layers,
            num_heads=self.num_heads,
            mlp_dim=self.mlp_dim,
            dropout_rate=self.dropout_rate,
            attention_dropout_rate=self.attention_dropout_rate,
            layer_norm_epsilon=self.layer_norm_epsilon,
        )
        return config
