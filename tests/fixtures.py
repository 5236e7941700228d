"""The parity fixtures of ../shared/fixtures, regenerated here: checkpoints
are a pure function of key name and shape (splitmix64), so only the key
lists and the reference logits are stored (tests/data/*.json|npz)."""
import json
import os
import zlib

import numpy as np

DATA = os.path.join(os.path.dirname(__file__), "data")
CASES = ["vit_tiny_token", "vit_tiny_token_to24", "vit_tiny_gap", "hybrid_tiny", "hybrid_stem_only", "bit_r50x1_h10"]

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix(i, seed):
    with np.errstate(over="ignore"):
        z = i + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def uniform(name, shape):
    n = int(np.prod(shape)) if len(shape) else 1
    bits = _mix(np.arange(n, dtype=np.uint64), zlib.crc32(name.encode()) + 1)
    return ((bits >> np.uint64(11)).astype(np.float64) / float(1 << 53) * 2.0 - 1.0).reshape(shape)


def param(name, shape):
    leaf = name.split("/")[-1]
    u = uniform(name, shape) * np.sqrt(3.0)
    if leaf in ("scale", "gamma"):
        v = 1.0 + 0.1 * u
    elif leaf in ("bias", "beta"):
        v = 0.05 * u
    elif leaf in ("pos_embedding", "cls"):
        v = 0.1 * u
    elif leaf == "kernel":
        if "MultiHeadDotProductAttention" in name:
            fan_in = shape[0] * shape[1] if name.split("/")[-2] == "out" else shape[0]
        else:
            fan_in = int(np.prod(shape[:-1]))
        v = u / np.sqrt(fan_in)
    else:
        raise ValueError(f"no rule for {name}")
    return v.astype(np.float32)


def load_case(case):
    with open(os.path.join(DATA, case + ".json")) as f:
        spec = json.load(f)
    logits = np.load(os.path.join(DATA, case + ".npz"))["logits"]
    return spec, logits


def checkpoint(case):
    """{key: array} of the case's checkpoint, in the published layout."""
    spec, _ = load_case(case)
    return {k: param(k, tuple(gen)).reshape(stored) for k, gen, stored in spec["keys"]}


def write_checkpoint(case, path):
    np.savez(path, **checkpoint(case))
    return path


def images(case):
    spec, _ = load_case(case)
    return uniform(spec["images"]["name"], tuple(spec["images"]["shape"])).astype(np.float32)
