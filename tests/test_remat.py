"""Rematerialization changes memory, never the numbers: a training step with
`remat=True` (dropout on, so the recomputed forward pass must replay the
first pass's masks) gives the losses and weights of one without it."""
import keras
import numpy as np

import keras_vit


def _model(remat):
    keras.utils.set_random_seed(1)
    model = keras_vit.VisionTransformer(
        patch_size=4, hidden_size=32, mlp_dim=64, num_heads=4, num_layers=2, input_shape=(16, 16, 3),
        classes=5, dropout_rate=0.2, attention_dropout_rate=0.1, remat=remat,
    )
    model.compile(keras.optimizers.SGD(0.1), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def _train(model, x, y, steps=2):
    # Same dropout stream in both models: seed states (tf, jax) and torch's
    # global generator (unseeded torch dropout) set alike.
    for i, state in enumerate(v for v in model.variables if v.name == "seed_generator_state"):
        state.assign(keras.ops.cast([7 + i, 3], state.dtype))
    losses = []
    for step in range(steps):
        keras.utils.set_random_seed(5 + step)
        losses.append(float(model.train_on_batch(x, y)))
    return losses


def test_remat_trains_identically_with_dropout():
    plain, remat = _model(False), _model(True)
    remat.set_weights(plain.get_weights())
    assert remat.get_layer("encoderblock_0").remat
    x = np.random.default_rng(0).random((4, 16, 16, 3), dtype="float32")
    y = np.arange(4) % 5
    initial = [w.copy() for w in plain.get_weights()]
    np.testing.assert_allclose(_train(remat, x, y), _train(plain, x, y), rtol=1e-6)
    moved = 0
    for before, a, b in zip(initial, plain.get_weights(), remat.get_weights()):
        np.testing.assert_allclose(b, a, atol=1e-6)
        moved += not np.array_equal(a, before)
    assert moved > 10  # the step trained (gradients reached the blocks)


def test_remat_dropout_masks_change_between_steps():
    model = _model(True)
    block = model.get_layer("encoderblock_0")
    x = np.random.default_rng(0).normal(size=(2, 17, 32)).astype("float32")
    first = keras.ops.convert_to_numpy(block(x, training=True))
    second = keras.ops.convert_to_numpy(block(x, training=True))
    assert not np.allclose(first, second)


def test_gradient_barrier_changes_no_gradient(monkeypatch):
    from keras_vit.layers import encoder_block

    x = np.random.default_rng(0).random((4, 16, 16, 3), dtype="float32")
    y = np.arange(4) % 5
    # On every backend, whether or not it is XLA on CPU (where it is used).
    monkeypatch.setattr(encoder_block, "_xla_on_cpu", lambda: True)
    with_barrier = _model(False)
    initial = with_barrier.get_weights()
    losses = _train(with_barrier, x, y)
    monkeypatch.setattr(encoder_block, "_xla_on_cpu", lambda: False)
    without = _model(False)
    without.set_weights(initial)
    np.testing.assert_allclose(_train(without, x, y), losses, rtol=1e-6)
    for a, b in zip(with_barrier.get_weights(), without.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-6)
