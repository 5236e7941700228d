"""The paper's position-embedding ablation (Appendix D.4, Table 8) at small
scale: one small ViT trained with each position-embedding variant and
seed, under one schedule; writes WORKDIR/table.md and WORKDIR/table.png.
Finished runs are reused, so an interrupted ablation continues.

    python recipes/ablate_posemb.py --workdir=runs/ablate_posemb --seeds=3 --epochs=40
"""
from absl import app, flags

import common

flags.DEFINE_string("workdir", "runs/ablate_posemb", "Output folder.")
flags.DEFINE_integer("seeds", 2, "Seeds per variant.")
flags.DEFINE_string("model", "Mu/4", "ViT variant or builder name.")
flags.DEFINE_string("dataset", "digits", "Dataset (as the pretrain recipe).")
flags.DEFINE_string("data_dir", None, "TFDS data_dir.")
flags.DEFINE_integer("image_size", 16, "Image size.")
flags.DEFINE_integer("epochs", 40, "Epochs per run.")
flags.DEFINE_integer("batch_size", 64, "Global batch size.")
flags.DEFINE_float("lr", 1e-3, "Peak learning rate.")
flags.DEFINE_float("crop_min_area", 0.3, "Smallest inception-crop area.")
FLAGS = flags.FLAGS


def main(_):
    import os

    from keras_vit.training.ablation import run_ablation, write_table

    os.makedirs(FLAGS.workdir, exist_ok=True)
    results = run_ablation(
        FLAGS.workdir, seeds=tuple(range(FLAGS.seeds)), model=FLAGS.model, dataset=FLAGS.dataset,
        data_dir=FLAGS.data_dir, image_size=FLAGS.image_size, epochs=FLAGS.epochs, batch_size=FLAGS.batch_size,
        lr=FLAGS.lr, crop_min_area=FLAGS.crop_min_area, verbose=0,
    )
    table = write_table(results, os.path.join(FLAGS.workdir, "table.md"), os.path.join(FLAGS.workdir, "table.png"),
                        f"Position embeddings, {FLAGS.model} on {FLAGS.dataset} at {FLAGS.image_size} px, "
                        f"{FLAGS.epochs} epochs")
    print(table)


if __name__ == "__main__":
    common.tune_runtime()
    app.run(main)
