import os

import numpy as np
import pytest
import tensorflow as tf

from keras_vit import data


def _batches(ds, n):
    return [(x.numpy(), y.numpy()) for x, y in ds.take(n)]


def test_embedded_dataset():
    train = data.load_source(data.EMBEDDED, "train")
    val = data.load_source(data.EMBEDDED, "validation")
    assert (train.num_classes, train.num_examples, val.num_examples) == (10, 1437, 360)


@pytest.mark.parametrize("augment", [dict(), dict(mixup=0.2, randaugment=True, label_smoothing=0.1)])
def test_train_stream_is_deterministic_and_restartable(augment):
    src = data.load_source(data.EMBEDDED, "train")
    full = _batches(data.train_dataset(src, 16, 8, seed=3, **augment), 5)
    again = _batches(data.train_dataset(src, 16, 8, seed=3, **augment), 5)
    resumed = _batches(data.train_dataset(src, 16, 8, seed=3, start_step=3, **augment), 2)
    for (a, la), (b, lb) in zip(full, again):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(la, lb)
    for (a, la), (b, lb) in zip(full[3:], resumed):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(la, lb)
    other = _batches(data.train_dataset(src, 16, 8, seed=4, **augment), 1)
    assert not np.array_equal(other[0][0], full[0][0])
    x, y = full[0]
    assert x.shape == (8, 16, 16, 3) and y.shape == (8, 10)
    assert x.min() >= -1.0 and x.max() <= 1.0
    np.testing.assert_allclose(y.sum(-1), 1.0, rtol=1e-6)


def test_eval_pipeline_is_plain_resize():
    src = data.load_source(data.EMBEDDED, "validation")
    x, y = next(iter(data.eval_dataset(src, 8, 4)))
    images = [im for im, _ in src.dataset.take(4)]
    np.testing.assert_allclose(x.numpy(), np.stack(images).astype("float32") / 127.5 - 1.0, atol=1e-5)


def test_inception_crop_area():
    image = tf.zeros((100, 100, 3), tf.uint8)
    areas = []
    for i in range(50):
        crop = data.inception_crop(image, tf.constant([0, i], tf.int64))
        areas.append(crop.shape[0] * crop.shape[1] / 10000)
    assert min(areas) >= 0.04 and max(areas) <= 1.0 and np.std(areas) > 0.05


def test_image_folder(tmp_path):
    rng = np.random.default_rng(0)
    for cls in ("cat", "dog"):
        os.makedirs(tmp_path / cls)
        for i in range(6):
            png = tf.io.encode_png(rng.integers(0, 255, (10, 12, 3), dtype=np.uint8))
            tf.io.write_file(str(tmp_path / cls / f"{i}.png"), png)
    train = data.load_source(f"folder:{tmp_path}", "train")
    val = data.load_source(str(tmp_path), "validation")
    assert train.num_classes == 2 and train.num_examples + val.num_examples == 12
    x, y = next(iter(data.train_dataset(train, 8, 4)))
    assert x.shape == (4, 8, 8, 3)


def test_missing_folder_and_empty_folder(tmp_path):
    with pytest.raises(data.DataError, match="does not exist"):
        data.load_source(f"folder:{tmp_path}/nope", "train")
    with pytest.raises(data.DataError, match="no images"):
        data.load_source(f"folder:{tmp_path}", "train")


def test_tfds_by_name_with_mock_data():
    tfds = pytest.importorskip("tensorflow_datasets")
    with tfds.testing.mock_data(num_examples=12):
        src = data.load_source("cifar10", "train")
        assert src.num_classes == 10
        x, y = next(iter(data.train_dataset(src, 16, 4)))
        assert x.shape == (4, 16, 16, 3)


def test_unprepared_tfds_dataset_says_how_to_prepare(tmp_path):
    with pytest.raises(data.DataError, match="tfds build oxford_flowers102 --data_dir"):
        data.load_source("oxford_flowers102", "train", data_dir=str(tmp_path))


def test_folder_with_split_subfolders_shares_labels(tmp_path):
    rng = np.random.default_rng(0)
    for split, classes in (("train", ("a", "b", "c")), ("val", ("a", "c"))):
        for cls in classes:
            os.makedirs(tmp_path / split / cls)
            for i in range(2):
                tf.io.write_file(str(tmp_path / split / cls / f"{i}.png"),
                                 tf.io.encode_png(rng.integers(0, 255, (6, 6, 3), dtype=np.uint8)))
    train = data.load_source(str(tmp_path), "train")
    val = data.load_source(str(tmp_path), "validation")
    assert train.num_classes == val.num_classes == 3
    assert sorted(int(y) for _, y in val.dataset) == [0, 0, 2, 2]


def test_randaugment_keeps_images_in_range():
    src = data.load_source(data.EMBEDDED, "train")
    x, _ = next(iter(data.train_dataset(src, 16, 32, randaugment=True)))
    plain, _ = next(iter(data.train_dataset(src, 16, 32)))
    assert x.numpy().min() >= -1.0 and x.numpy().max() <= 1.0
    # Photometric ops move pixels but keep the images recognisable.
    assert np.abs(x.numpy() - plain.numpy()).mean() < 0.5
