"""The variant table, decoded from names like "B/16" (big_vision style).

Configs are plain data: builders read them, nothing else lives here.
"""
import difflib

# width (D), MLP width, heads, layers. "Mu" is not from the paper: a micro
# size for CPU demos and tests.
VIT_WIDTHS = {
    "Mu": dict(hidden_size=64, mlp_dim=128, num_heads=4, num_layers=4),
    "Ti": dict(hidden_size=192, mlp_dim=768, num_heads=3, num_layers=12),
    "S": dict(hidden_size=384, mlp_dim=1536, num_heads=6, num_layers=12),
    "B": dict(hidden_size=768, mlp_dim=3072, num_heads=12, num_layers=12),
    "L": dict(hidden_size=1024, mlp_dim=4096, num_heads=16, num_layers=24),
    "H": dict(hidden_size=1280, mlp_dim=5120, num_heads=16, num_layers=32),
}

# Hybrid stems: ResNet stage sizes before the 1x1 (or PxP) patch embedding.
RESNET_STAGES = {"R": (), "R26": (2, 2, 2, 2), "R50": (3, 4, 9)}
# R50+ViT-L/32 keeps the standard four stages (stride 32); R50+B/16 moves
# stage 4 into stage 3 (stride 16), the paper's two hybrid options.
R50_FOUR_STAGES = (3, 4, 6, 3)

# BiT ResNetV2 depths.
BIT_DEPTHS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}


def decode_variant(name):
    """`"B/16"` -> ViT config; `"R50+B/16"` -> hybrid config (patch 1 on the
    ResNet feature map, except the root-only `"R+Ti/16"` which uses 8x8).
    """
    stem = None
    spec = name
    if "+" in name:
        stem, spec = name.split("+", 1)
    try:
        width, patch = spec.split("/")
        config = dict(VIT_WIDTHS[width], patch_size=int(patch))
    except (KeyError, ValueError):
        raise ValueError(
            f"unknown ViT variant {name!r}: expected WIDTH/PATCH with WIDTH in "
            f"{sorted(VIT_WIDTHS)} (e.g. 'B/16'), optionally prefixed by a ResNet stem "
            f"in {sorted(RESNET_STAGES)} (e.g. 'R50+B/16')"
        ) from None
    if stem is not None:
        if stem not in RESNET_STAGES:
            raise ValueError(f"unknown ResNet stem {stem!r} in {name!r}; known: {sorted(RESNET_STAGES)}")
        stages = RESNET_STAGES[stem]
        if stem == "R50" and config["patch_size"] == 32:
            stages = R50_FOUR_STAGES
        config["resnet_stages"] = stages
        # Total stride: root /4, then /2 per stage after the first.
        feature_stride = 4 * 2 ** max(len(stages) - 1, 0)
        config["patch_size"] = max(config["patch_size"] // feature_stride, 1)
        if not stages:
            config["patch_size"] = 8
    return config


def closest(name, names):
    match = difflib.get_close_matches(name, names, n=3)
    return f" Did you mean {' or '.join(repr(m) for m in match)}?" if match else ""


def total_stride(config):
    """Pixels per token side of a decoded ViT/hybrid config."""
    stages = config.get("resnet_stages")
    feature = 1 if stages is None else 4 * 2 ** max(len(stages) - 1, 0)
    return config["patch_size"] * feature
