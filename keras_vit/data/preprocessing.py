"""The reference preprocessing, on tf.data (it feeds every backend).

Randomness is stateless and keyed by (seed, global example index), so a
pipeline restarted at step N yields exactly the batches an uninterrupted run
would have: the basis of exact resumption after preemption.
"""
import tensorflow as tf


def to_unit_range(image):
    """uint8 [0, 255] -> float32 [-1, 1], as every published checkpoint expects."""
    return tf.cast(image, tf.float32) / 127.5 - 1.0


def inception_crop(image, seed, area_range=(0.05, 1.0), aspect_range=(3 / 4, 4 / 3)):
    """A random crop of 5%-100% of the area (Inception-style), stateless."""
    begin, size, _ = tf.image.stateless_sample_distorted_bounding_box(
        tf.shape(image),
        bounding_boxes=tf.constant([0.0, 0.0, 1.0, 1.0], shape=[1, 1, 4]),
        seed=seed,
        area_range=area_range,
        aspect_ratio_range=aspect_range,
        min_object_covered=0.0,
        use_image_if_no_bounding_boxes=True,
    )
    return tf.slice(image, begin, size)


def train_preprocess(image, image_size, seed, min_area=0.05):
    """Inception crop (`min_area`-100% of the area) -> resize -> random
    horizontal flip -> [-1, 1]."""
    seeds = tf.random.experimental.stateless_split(seed, 2)
    image = inception_crop(image, seeds[0], area_range=(min_area, 1.0))
    image = tf.image.resize(image, (image_size, image_size), method="bilinear", antialias=True)
    image = tf.image.stateless_random_flip_left_right(image, seeds[1])
    return to_unit_range(image)


def eval_preprocess(image, image_size):
    """Resize -> [-1, 1]."""
    image = tf.image.resize(image, (image_size, image_size), method="bilinear", antialias=True)
    return to_unit_range(image)
