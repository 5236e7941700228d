"""Batched input pipelines: shuffle, preprocess, batch by the global batch
size, prefetch. Deterministic for a seed, and restartable at any step."""
import tensorflow as tf

from keras_vit.data.preprocessing import eval_preprocess, train_preprocess


def train_dataset(source, image_size, batch_size, seed=0, start_step=0, label_smoothing=0.0,
                  mixup=0.0, randaugment=False, shuffle_buffer=10_000, crop_min_area=0.05,
                  num_shards=1, shard_index=0):
    """Endless training batches of (images in [-1, 1], one-hot labels).

    Element i of the stream is the same whatever `start_step` is: the shuffle
    is seeded and the augmentation keyed by (seed, i), so a run resumed at
    `start_step` sees exactly the batches it would have seen. With
    `num_shards` (hosts), each host reads every num_shards-th example.
    """
    ds = _shuffled_stream(source, seed, shuffle_buffer)
    ds = ds.enumerate().skip(start_step * batch_size * num_shards)
    if num_shards > 1:
        ds = ds.shard(num_shards, shard_index)
    k = source.num_classes

    def prep(i, example):
        image, label = example
        image = train_preprocess(image, image_size, tf.stack([tf.cast(seed, tf.int64), i]), crop_min_area)
        return image, tf.one_hot(label, k)

    ds = ds.map(prep, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    ds = ds.batch(batch_size, drop_remainder=True)
    if randaugment or mixup:
        ds = ds.enumerate(start=start_step).map(
            _augment_batch(seed, mixup, randaugment), num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
        )
    if label_smoothing:
        ds = ds.map(lambda x, y: (x, y * (1.0 - label_smoothing) + label_smoothing / k))
    return ds.prefetch(tf.data.AUTOTUNE)


def _shuffled_stream(source, seed, shuffle_buffer):
    """Examples in a fresh order each epoch. Sources with random access get
    a stateless permutation per epoch, keyed by (seed, epoch): identical in
    any process or tf.distribute input pipeline. Streaming (TFDS) sources
    use a seeded shuffle buffer, reproducible across restarts."""
    if source.table is None:
        return source.dataset.shuffle(min(shuffle_buffer, source.num_examples), seed=seed,
                                      reshuffle_each_iteration=True).repeat()
    keys, labels = (tf.constant(t) for t in source.table)
    n = source.num_examples

    def permutation(epoch):
        noise = tf.random.stateless_uniform([n], tf.stack([tf.cast(seed, tf.int64), epoch]))
        return tf.data.Dataset.from_tensor_slices(tf.argsort(noise))

    order = tf.data.Dataset.range(2**62).flat_map(permutation)
    return order.map(lambda i: (source.decode(tf.gather(keys, i)), tf.gather(labels, i)),
                     num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def eval_dataset(source, image_size, batch_size):
    k = source.num_classes
    ds = source.dataset.map(lambda image, label: (eval_preprocess(image, image_size), tf.one_hot(label, k)),
                            num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)


def _augment_batch(seed, mixup, randaugment):
    """AugReg-style batch augmentation: RandAugment (2 ops, magnitude 10 of
    30 -> factor 0.33) and MixUp with a Beta(alpha, alpha) mixing weight, both
    keyed by (seed, step) for determinism."""

    def apply(step, batch):
        images, labels = batch
        seeds = tf.random.experimental.stateless_split(tf.stack([tf.cast(seed, tf.int64) + 7, step]), 3)
        if randaugment:
            images = _rand_augment(images, seeds[0])
        if mixup:
            g1 = tf.random.stateless_gamma([], seed=seeds[1], alpha=mixup)
            g2 = tf.random.stateless_gamma([], seed=seeds[2], alpha=mixup)
            lam = g1 / (g1 + g2)
            images = lam * images + (1 - lam) * tf.reverse(images, [0])
            labels = lam * labels + (1 - lam) * tf.reverse(labels, [0])
        return images, labels

    return apply


def _rand_augment(images, seed):
    """Two random ops per batch from a small photometric/geometric set
    (brightness, contrast, saturation, hue, vertical flip, translation)."""
    ops = [
        lambda x, s: tf.image.stateless_random_brightness(x, 0.3, s),
        lambda x, s: tf.image.stateless_random_contrast(x, 0.7, 1.3, s),
        lambda x, s: tf.image.stateless_random_saturation(x, 0.7, 1.3, s),
        lambda x, s: tf.image.stateless_random_hue(x, 0.05, s),
        lambda x, s: tf.image.flip_up_down(x),
        lambda x, s: tf.roll(x, shift=tf.random.stateless_uniform([], s, -2, 3, tf.int32), axis=2),
    ]
    seeds = tf.random.experimental.stateless_split(seed, 4)
    # The colour ops expect [0, 1].
    images = (images + 1.0) / 2.0
    for j in range(2):
        choice = tf.random.stateless_uniform([], seeds[2 * j], 0, len(ops), tf.int32)
        op_seed = seeds[2 * j + 1]
        images = tf.switch_case(choice, [lambda f=f: f(images, op_seed) for f in ops])
    return tf.clip_by_value(images * 2.0 - 1.0, -1.0, 1.0)
