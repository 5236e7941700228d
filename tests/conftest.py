import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(__file__))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.set_random_seed(0)
    yield
    keras.backend.clear_session()


def assert_close(a, b, rel=1e-4):
    a, b = keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = max(np.abs(b).max(), 1e-12)
    err = np.abs(a - b).max() / scale
    assert err <= rel, f"max |diff| = {err:.3e} x max |ref|, tolerance {rel:.0e}"
