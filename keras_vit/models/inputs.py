"""Argument validation and input creation shared by every builder
(keras.applications conventions: errors quote the received value)."""
import keras


def image_input(input_tensor, input_shape, default_size, divisor, what, weights):
    """Returns (keras input tensor, (H, W, C)) after validating the shape."""
    if input_tensor is not None:
        if not keras.backend.is_keras_tensor(input_tensor):
            raise ValueError(
                f"input_tensor must be a Keras tensor (e.g. keras.Input(...)), received {type(input_tensor).__name__}"
            )
        tensor_shape = tuple(input_tensor.shape[1:])
        if input_shape is not None and tuple(input_shape) != tensor_shape:
            raise ValueError(
                f"input_shape={tuple(input_shape)!r} disagrees with input_tensor's shape {tensor_shape!r}; "
                "pass one of them"
            )
        input_shape = tensor_shape
    if input_shape is None:
        input_shape = (default_size, default_size, 3)
    try:
        input_shape = tuple(input_shape)
        valid = len(input_shape) == 3
    except TypeError:
        valid = False
    if not valid:
        raise ValueError(
            f"input_shape must be (height, width, channels), channels last; received {input_shape!r}"
        )
    height, width, channels = input_shape
    if not isinstance(channels, int) or channels < 1:
        raise ValueError(f"input_shape={input_shape!r}: the number of channels must be known and positive")
    if height is None or width is None:
        raise ValueError(
            f"input_shape={input_shape!r}: height and width must be known, since the position "
            "embedding is sized for one patch grid; build a model per resolution (weights transfer "
            "and position embeddings resize on load)"
        )
    if channels != 3 and weights is not None:
        raise ValueError(
            f"input_shape={input_shape!r} has {channels} channel(s), but pretrained weights expect "
            "3 (RGB); use weights=None to train from scratch on other inputs"
        )
    for side, size in (("height", height), ("width", width)):
        if size <= 0 or size % divisor:
            lower = max(size // divisor, 1) * divisor
            raise ValueError(
                f"input_shape={input_shape!r}: image {side} {size} is not divisible by {divisor}, "
                f"the {what}; use a multiple such as {lower} or {lower + divisor}"
            )
    if input_tensor is None:
        return keras.Input(shape=input_shape, name="images"), input_shape
    return input_tensor, input_shape


def model_inputs(inputs, input_tensor):
    if input_tensor is not None:
        return keras.utils.get_source_inputs(input_tensor)
    return inputs


def check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, received {value!r}")


def check_classes(classes, include_top):
    if include_top and (not isinstance(classes, int) or isinstance(classes, bool) or classes < 1):
        raise ValueError(f"classes must be a positive int when include_top=True, received {classes!r}")


def head_dtype():
    """Logits in float32 under mixed precision, as keras.applications does."""
    policy = keras.config.dtype_policy()
    return "float32" if policy.compute_dtype != policy.variable_dtype else None
