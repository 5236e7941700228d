"""Input pipelines on tf.data: TFDS datasets, image folders, the embedded
offline dataset (scikit-learn digits), and the reference preprocessing."""
from keras_vit.data.pipeline import eval_dataset, train_dataset
from keras_vit.data.preprocessing import eval_preprocess, inception_crop, to_unit_range, train_preprocess
from keras_vit.data.sources import EMBEDDED, DataError, Source, load_source
