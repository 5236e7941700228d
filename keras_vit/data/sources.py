"""Where images come from: TFDS by name, a folder of images, or the embedded
offline dataset. Each source gives (tf.data of (uint8 image, int label),
num_classes, num_examples)."""
import os

import numpy as np
import tensorflow as tf

EMBEDDED = "digits"
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif")


class DataError(ValueError):
    """A dataset that cannot be read, with how to prepare it."""


class Source:
    """`dataset` streams (image, label); sources that allow random access
    also give `table` = (keys, labels) arrays and `decode(key) -> image`."""

    def __init__(self, dataset, num_classes, num_examples, name, table=None, decode=None):
        self.dataset = dataset
        self.num_classes = num_classes
        self.num_examples = num_examples
        self.name = name
        self.table = table
        self.decode = decode


def load_source(name, split, data_dir=None):
    """`split` is "train" or "validation" (the eval split of the dataset)."""
    if split not in ("train", "validation"):
        raise ValueError(f"split must be 'train' or 'validation', received {split!r}")
    if name == EMBEDDED:
        return _digits(split)
    if name.startswith("folder:") or os.path.isdir(name):
        return _folder(name[len("folder:"):] if name.startswith("folder:") else name, split)
    return _tfds(name, split, data_dir)


def _digits(split):
    """scikit-learn's handwritten digits: 1,797 real 8x8 scans shipped with
    the package (no download), 10 classes; a fixed 80/20 split."""
    from sklearn.datasets import load_digits

    data = load_digits()
    images = np.round(data.images / 16.0 * 255.0).astype(np.uint8)
    images = np.repeat(images[..., None], 3, axis=-1)
    order = np.random.default_rng(0).permutation(len(images))
    cut = int(0.8 * len(images))
    idx = order[:cut] if split == "train" else order[cut:]
    table = (images[idx], data.target[idx].astype(np.int64))
    return Source(tf.data.Dataset.from_tensor_slices(table), 10, len(idx), EMBEDDED, table, lambda image: image)


def _folder(root, split):
    """`root/class/*.jpg`; with `root/train` and `root/validation` (or
    `val`) subfolders each split reads its own, otherwise 10% is held out."""
    if not os.path.isdir(root):
        raise DataError(f"image folder {root!r} does not exist; expected root/<class>/<image>.jpg")
    train_dir = os.path.join(root, "train")
    if not os.path.isdir(train_dir):
        return _folder_files(root, split, _classes(root))
    classes = _classes(train_dir)  # one label map for both splits
    for candidate in ("validation", "val"):
        if os.path.isdir(os.path.join(root, candidate)):
            return _folder_files(train_dir if split == "train" else os.path.join(root, candidate), None, classes)
    return _folder_files(train_dir, split, classes)


def _classes(root):
    return sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))


def _folder_files(root, holdout_split, classes):
    files, labels = [], []
    for label, cls in enumerate(classes):
        if not os.path.isdir(os.path.join(root, cls)):
            continue
        for f in sorted(os.listdir(os.path.join(root, cls))):
            if f.lower().endswith(IMAGE_EXTENSIONS):
                files.append(os.path.join(root, cls, f))
                labels.append(label)
    if not files:
        raise DataError(f"no images under {root!r}; expected {root}/<class>/<image>.jpg")
    files, labels = np.array(files), np.array(labels, np.int64)
    if holdout_split is not None:
        held = np.random.default_rng(0).random(len(files)) < 0.1
        keep = held if holdout_split == "validation" else ~held
        files, labels = files[keep], labels[keep]

    def decode(path):
        return tf.io.decode_image(tf.io.read_file(path), channels=3, expand_animations=False)

    ds = tf.data.Dataset.from_tensor_slices((files, labels)).map(
        lambda path, label: (decode(path), label), num_parallel_calls=tf.data.AUTOTUNE
    )
    return Source(ds, len(classes), len(files), root, (files, labels), decode)


_EVAL_SPLITS = ("validation", "test")


def _tfds(name, split, data_dir):
    import tensorflow_datasets as tfds

    try:
        builder = tfds.builder(name, data_dir=data_dir)
    except Exception as e:  # tfds raises its own DatasetNotFoundError
        raise DataError(f"unknown dataset {name!r} ({e}); use a TFDS name, folder:PATH, or {EMBEDDED!r}") from None
    info = builder.info
    if split == "validation" and info.splits:
        split = next((s for s in _EVAL_SPLITS if s in info.splits), None)
        if split is None:
            raise DataError(f"dataset {name!r} has no validation or test split")
    elif split == "validation":
        split = "test"
    try:
        ds = builder.as_dataset(split=split, shuffle_files=False, as_supervised=False)
    except (AssertionError, OSError, ValueError) as e:  # tfds: "could not find data in ..."
        raise DataError(
            f"dataset {name!r} is not prepared in data_dir={str(data_dir or builder.data_dir_root)!r} "
            f"({type(e).__name__}). Prepare it once with `tfds build {name} --data_dir=DIR` (manual "
            "downloads, e.g. imagenet2012, go in DIR/downloads/manual), then pass --data_dir=DIR"
        ) from None
    label = "label"
    channels = info.features["image"].shape[-1]
    to_rgb = tf.image.grayscale_to_rgb if channels == 1 else (lambda image: image)
    ds = ds.map(lambda ex: (to_rgb(ex["image"]), ex[label]))
    try:
        count = info.splits[split].num_examples
    except KeyError:  # metadata without split sizes (e.g. tfds.testing.mock_data)
        count = int(ds.reduce(0, lambda n, _: n + 1))
    return Source(ds, info.features[label].num_classes, count, name)
