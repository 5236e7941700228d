"""Named published checkpoints: builder -> {tag: Preset}; downloaded once
into the Keras cache under a path that keeps the source folder (several
published files share a basename, e.g. ViT-B_16.npz)."""
import os
import urllib.parse

import keras

from keras_vit.weights.errors import WeightsError

VIT_ROOT = "https://storage.googleapis.com/vit_models"
BIT_ROOT = "https://storage.googleapis.com/bit_models"


class Preset:
    def __init__(self, url, image_size, classes, representation_size=None, pooling="token", note=""):
        self.url = url
        self.image_size = image_size
        self.classes = classes
        self.representation_size = representation_size
        self.pooling = pooling
        self.note = note

    def __repr__(self):
        return f"Preset({self.url!r}, image_size={self.image_size}, classes={self.classes})"


PRESETS = {}


def register(builder, tag, preset):
    PRESETS.setdefault(builder, {})[tag] = preset


def list_presets(builder=None):
    """{builder: [tags]} of every named checkpoint (or the tags of one builder)."""
    if builder is not None:
        return sorted(PRESETS.get(builder, {}))
    return {b: sorted(tags) for b, tags in PRESETS.items()}


def get_preset(builder, tag):
    return PRESETS.get(builder, {}).get(tag)


def preset_image_size(builder, weights):
    preset = get_preset(builder, weights) if isinstance(weights, str) else None
    return preset.image_size if preset else None


def is_url(weights):
    return isinstance(weights, str) and urllib.parse.urlparse(weights).scheme in ("http", "https", "file", "gs")


def download(url):
    """Fetches `url` once into the Keras cache (~/.keras/keras_vit/...)."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "gs":
        url = f"https://storage.googleapis.com/{parsed.netloc}{parsed.path}"
        parsed = urllib.parse.urlparse(url)
    parts = [p for p in urllib.parse.unquote(parsed.path).split("/") if p]
    if not parts:
        raise WeightsError(f"URL {url!r} names no file")
    fname = parts[-1]
    subdir = "/".join(["keras_vit", parsed.netloc or "local"] + parts[:-1])
    cache_dir = os.environ.get("KERAS_HOME")
    if cache_dir:
        # get_file falls back to /tmp when the cache folder does not exist yet.
        os.makedirs(cache_dir, exist_ok=True)
    try:
        return keras.utils.get_file(fname=fname, origin=url, cache_subdir=subdir, cache_dir=cache_dir)
    except Exception as e:  # get_file raises bare Exception subclasses per cause
        raise WeightsError(
            f"could not download weights from {url!r} ({type(e).__name__}: {e}). Without network "
            "access, download the file elsewhere and pass its local path, e.g. weights='/path/to/"
            f"{fname}'"
        ) from None
