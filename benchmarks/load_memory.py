"""Peak memory and time of building a model and loading its `.npz`.

    python benchmarks/load_memory.py --model=ViT_L16 --classes=21843 --representation_size=1024

Writes a checkpoint of the model's own shape with `save_npz` (in a separate
process), then, in a fresh process, measures peak RSS growth over the RSS
after `import keras_vit` while building the model with `weights=` that file.
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from absl import app, flags

flags.DEFINE_string("model", "ViT_L16", "Builder name.")
flags.DEFINE_integer("classes", 21843, "Head classes.")
flags.DEFINE_integer("representation_size", 1024, "pre_logits width (0: none).")
flags.DEFINE_integer("image_size", 224, "Image size.")
flags.DEFINE_string("checkpoint", None, "Existing .npz to load (default: write one).")
flags.DEFINE_bool("child", False, "Internal: run the measured load.")
FLAGS = flags.FLAGS


def _build(weights):
    import keras_vit

    kwargs = dict(classes=FLAGS.classes, input_shape=(FLAGS.image_size,) * 2 + (3,), weights=weights)
    if FLAGS.representation_size:
        kwargs["representation_size"] = FLAGS.representation_size
    return keras_vit.get_builder(FLAGS.model)(**kwargs)


def _rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main(_):
    if FLAGS.child:
        import keras_vit  # noqa: F401

        base = _rss_mb()
        start = time.time()
        _build(FLAGS.checkpoint)
        seconds = time.time() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps({"rss_after_import_mb": round(base), "peak_rss_mb": round(peak),
                          "growth_mb": round(peak - base), "build_and_load_s": round(seconds, 1)}))
        return
    path = FLAGS.checkpoint
    if path is None:
        path = os.path.join(tempfile.mkdtemp(), f"{FLAGS.model}.npz")
        code = ("import sys; sys.argv=sys.argv[:1]; from absl import flags; "
                f"import benchmarks.load_memory as b; flags.FLAGS(['x'] + {sys.argv[1:]!r}); "
                f"import keras_vit; keras_vit.save_npz(b._build(None), {path!r})")
        subprocess.run([sys.executable, "-c", code], check=True)
    size_mb = os.path.getsize(path) / 2**20
    out = subprocess.run([sys.executable, __file__, "--child", f"--checkpoint={path}"] + sys.argv[1:],
                         check=True, capture_output=True, text=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result.update(weights_mb=round(size_mb), growth_over_weights=round(result["growth_mb"] / size_mb, 2))
    print(json.dumps(result))


if __name__ == "__main__":
    app.run(main)
