"""What a run leaves for people: throughput and learning-curve PNGs."""
import csv
import time

import keras


class ThroughputMeter(keras.callbacks.Callback):
    """Training images per second, excluding the first batch (compilation)."""

    def __init__(self, batch_size):
        super().__init__()
        self.batch_size = batch_size
        self.images = 0
        self.seconds = 0.0
        self._t = None
        self._first = True

    def on_train_batch_begin(self, batch, logs=None):
        self._t = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        if self._first:
            self._first = False
            return
        self.seconds += time.perf_counter() - self._t
        self.images += self.batch_size

    def images_per_second(self):
        return round(self.images / self.seconds, 1) if self.seconds else None


def write_curves(csv_path, png_path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return
    epochs = [int(r["epoch"]) + 1 for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for ax, metric in zip(axes, ("loss", "accuracy")):
        for key in (metric, f"val_{metric}"):
            if key in rows[0]:
                ax.plot(epochs, [float(r[key]) for r in rows], label=key)
        ax.set_xlabel("epoch")
        ax.set_ylabel(metric)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
