"""The paper's optimizers (Appendix B)."""
import keras

from keras_vit.training.schedules import WarmupDecay


def no_decay_variables(model):
    """Biases, norm scales/offsets, position embeddings and the class token:
    everything but kernels is exempt from weight decay."""
    return [v for v in model.trainable_variables if not v.name.endswith("kernel")]


def pretrain_optimizer(model, lr, total_steps, warmup_steps, decay="linear", weight_decay=0.1,
                       grad_accum=1):
    """Adam (0.9, 0.999) with decoupled weight decay (`var -= lr * wd * var`,
    the semantics of the authors' Flax Adam), warmup then linear/cosine decay,
    global-norm clipping at 1."""
    optimizer = keras.optimizers.AdamW(
        WarmupDecay(lr, total_steps, warmup_steps, decay),
        weight_decay=weight_decay,
        beta_1=0.9,
        beta_2=0.999,
        global_clipnorm=1.0,
        gradient_accumulation_steps=grad_accum if grad_accum > 1 else None,
    )
    # Must precede optimizer.build (done by fit).
    optimizer.exclude_from_weight_decay(var_list=no_decay_variables(model))
    return _clip_the_global_gradient(optimizer)


def finetune_optimizer(lr, total_steps, warmup_steps, ema=None, grad_accum=1):
    """SGD with momentum 0.9, no weight decay, warmup then cosine decay,
    global-norm clipping at 1, optional Polyak averaging (e.g. 0.9999)."""
    return _clip_the_global_gradient(keras.optimizers.SGD(
        WarmupDecay(lr, total_steps, warmup_steps, "cosine"),
        momentum=0.9,
        global_clipnorm=1.0,
        use_ema=ema is not None,
        ema_momentum=ema if ema is not None else 0.99,
        gradient_accumulation_steps=grad_accum if grad_accum > 1 else None,
    ))


def _clip_the_global_gradient(optimizer):
    """Under tf.distribute, Keras clips each replica's partial gradient
    before summing them, so the clip differs from one device's. Summing
    first, clipping, then handing each replica 1/R of the result (which
    Keras sums again) clips the true global gradient."""
    original = optimizer._clip_gradients

    def clip(grads):
        if keras.backend.backend() == "tensorflow" and optimizer.global_clipnorm:
            import tensorflow as tf

            ctx = tf.distribute.get_replica_context()
            replicas = ctx.num_replicas_in_sync if ctx is not None else 1
            if replicas > 1:
                grads = original(ctx.all_reduce(tf.distribute.ReduceOp.SUM, grads))
                return [g / replicas for g in grads]
        return original(grads)

    optimizer._clip_gradients = clip
    return optimizer


def classification_loss(kind="softmax"):
    """Softmax cross-entropy, or sigmoid cross-entropy (the ImageNet-21k
    checkpoints), both on one-hot (possibly smoothed or mixed) labels."""
    if kind == "softmax":
        return keras.losses.CategoricalCrossentropy(from_logits=True)
    if kind == "sigmoid":
        return sigmoid_cross_entropy
    raise ValueError(f"loss must be 'softmax' or 'sigmoid', received {kind!r}")


@keras.saving.register_keras_serializable(package="keras_vit")
def sigmoid_cross_entropy(y_true, y_pred):
    """Per-class sigmoid cross-entropy summed over classes (not averaged, as
    the reference), mean over the batch."""
    per_class = keras.ops.binary_crossentropy(y_true, y_pred, from_logits=True)
    return keras.ops.sum(per_class, axis=-1)
