"""Resampling of learned position embeddings to a new patch grid.

One function serves checkpoint loading, `.weights.h5` loading and users.
"""
import numpy as np

METHODS = ("linear", "bicubic")


def resize_position_embedding(posemb, old_grid, new_grid, num_prefix_tokens=1, method="linear"):
    """Resizes a `(1, prefix + gh*gw, D)` position embedding to `new_grid`.

    `method="linear"` reproduces the reference exactly: the class-token row is
    kept and the grid is resampled like `scipy.ndimage.zoom(grid, zoom,
    order=1)`, i.e. linear interpolation with corner-aligned sample points
    (output i maps to input i*(old-1)/(new-1)). `"bicubic"` resamples with the
    half-pixel bicubic kernel (a=-0.5) that timm uses, with antialiasing when
    shrinking.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, received {method!r}")
    posemb = np.asarray(posemb)
    old_grid, new_grid = tuple(old_grid), tuple(new_grid)
    if posemb.ndim != 3 or posemb.shape[0] != 1:
        raise ValueError(f"position embedding must have shape (1, tokens, dim), received {posemb.shape}")
    expected = num_prefix_tokens + old_grid[0] * old_grid[1]
    if posemb.shape[1] != expected:
        raise ValueError(
            f"position embedding has {posemb.shape[1]} tokens but grid {old_grid} with "
            f"{num_prefix_tokens} prefix token(s) needs {expected}"
        )
    if old_grid == new_grid:
        return posemb
    prefix = posemb[:, :num_prefix_tokens]
    grid = posemb[0, num_prefix_tokens:].reshape(old_grid + (-1,)).astype(np.float64)
    resample = _linear_matrix if method == "linear" else _bicubic_matrix
    rows = resample(old_grid[0], new_grid[0])
    cols = resample(old_grid[1], new_grid[1])
    grid = np.einsum("ij,jkd->ikd", rows, grid)
    grid = np.einsum("lk,ikd->ild", cols, grid)
    grid = grid.reshape(1, new_grid[0] * new_grid[1], -1).astype(posemb.dtype)
    return np.concatenate([prefix, grid], axis=1)


def infer_square_grid(num_grid_tokens):
    side = int(round(num_grid_tokens ** 0.5))
    if side * side != num_grid_tokens:
        return None
    return (side, side)


def _linear_matrix(n_in, n_out):
    """(n_out, n_in) weights of corner-aligned linear interpolation."""
    m = np.zeros((n_out, n_in))
    if n_in == 1 or n_out == 1:
        m[:, 0] = 1.0
        return m
    coords = np.arange(n_out) * ((n_in - 1) / (n_out - 1))
    lo = np.clip(np.floor(coords).astype(int), 0, n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    frac = coords - lo
    np.add.at(m, (np.arange(n_out), lo), 1.0 - frac)
    np.add.at(m, (np.arange(n_out), hi), frac)
    return m


def _cubic(x, a=-0.5):
    x = np.abs(x)
    return np.where(
        x <= 1,
        ((a + 2) * x - (a + 3)) * x * x + 1,
        np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0),
    )


def _bicubic_matrix(n_in, n_out):
    """(n_out, n_in) weights of half-pixel bicubic resampling, antialiased
    (kernel widened) when shrinking; borders clamp to the edge."""
    scale = n_out / n_in
    support = 2.0 / min(scale, 1.0)
    centers = (np.arange(n_out) + 0.5) / scale - 0.5
    m = np.zeros((n_out, n_in))
    for i, c in enumerate(centers):
        taps = np.arange(int(np.floor(c - support)) + 1, int(np.ceil(c + support)))
        w = _cubic((taps - c) * min(scale, 1.0))
        w = w / w.sum()
        np.add.at(m[i], np.clip(taps, 0, n_in - 1), w)
    return m
