"""Flags shared by the pretrain and fine-tune recipes (absl; `--helpfull`
documents each). The recipes only parse flags and call the package."""
import os
import platform
import sys

from absl import flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# Transparent huge pages for malloc'd memory, and freed buffers kept for
# reuse: up to 32 MiB (glibc's ceiling for this threshold) from the heap
# instead of fresh mmaps, and the heap never trimmed back to the kernel.
MALLOC_TUNABLES = ("glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:"
                   "glibc.malloc.trim_threshold=17179869184")


def tune_runtime():
    """Sets what the recipes run faster or leaner with, before anything
    computes: XLA:CPU's memory-minimizing scheduler for JAX (without it
    `--remat` saves nothing on CPU; see keras_vit/xla_cpu.py), then a
    restart with glibc's malloc tuned by MALLOC_TUNABLES.

    By default glibc returns large freed buffers to the kernel, so every
    training step faults its activations back in 4 KiB at a time: 510k page
    faults per JAX ViT-S/16 step on CPU, and 0.2-0.4 s of kernel time per
    torch ViT-B/16 forward. With these settings a JAX step takes 1.7k faults
    (about 15% faster) and a torch forward 4 (about 5% faster); tensorflow,
    which pools its own buffers, is unchanged. glibc reads the settings only
    at process start, hence the re-exec. A GLIBC_TUNABLES already set, or
    KERAS_VIT_FAST_MALLOC=0, keeps the process as it is.
    """
    if (sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
            and "GLIBC_TUNABLES" not in os.environ and os.environ.get("KERAS_VIT_FAST_MALLOC", "1") != "0"):
        env = dict(os.environ, GLIBC_TUNABLES=MALLOC_TUNABLES)
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    from keras_vit import xla_cpu  # imports keras: after the restart, not before it

    xla_cpu.use_memory_scheduler()


def define(mode, workdir, image_size, lr, steps_help):
    flags.DEFINE_string("model", "Mu/4", "A builder name (ViT_B16, R50_ViT_B16, BiT_R50x1, ...) or a "
                        "variant such as 'B/16', 'R50+B/16', or the CPU-sized 'Mu/4'.")
    flags.DEFINE_string("dataset", "digits", "A TFDS name (imagenet2012, cifar10, cifar100, oxford_iiit_pet, "
                        "oxford_flowers102, ...), folder:PATH (PATH/<class>/*.jpg), or 'digits' (embedded, offline).")
    flags.DEFINE_string("data_dir", None, "TFDS data_dir holding prepared datasets.")
    flags.DEFINE_integer("image_size", image_size, "Training and evaluation resolution (multiple of the patch).")
    flags.DEFINE_integer("batch_size", 64, "Global batch size (split over replicas).")
    flags.DEFINE_integer("steps", None, f"Total training steps ({steps_help}).")
    flags.DEFINE_integer("epochs", None, "Passes over the training split, instead of --steps.")
    flags.DEFINE_integer("steps_per_epoch", None, "Steps between validation/backups (default: one pass).")
    flags.DEFINE_float("lr", lr, "Peak learning rate.")
    flags.DEFINE_integer("warmup_steps", None, "Linear warmup steps (default: 10% of the steps).")
    flags.DEFINE_enum("strategy", "none", ["none", "mirrored", "tpu", "data_parallel", "model_parallel"],
                      "mirrored/tpu: tf.distribute (KERAS_BACKEND=tensorflow); data_parallel/model_parallel: "
                      "keras.distribution (KERAS_BACKEND=jax).")
    flags.DEFINE_string("tpu", None, "Cloud TPU name, or 'local' on a TPU VM (with --strategy=tpu).")
    flags.DEFINE_integer("model_parallel", 2, "Devices per model replica with --strategy=model_parallel.")
    flags.DEFINE_string("coordinator_address", None, "Multi-host JAX: host:port of process 0 (else the "
                        "KERAS_DISTRIBUTION_JOB_ADDRESSES variable).")
    flags.DEFINE_integer("num_processes", None, "Multi-host JAX: number of processes.")
    flags.DEFINE_integer("process_id", None, "Multi-host JAX: this process's index.")
    flags.DEFINE_bool("mixed_precision", False, "bfloat16 compute, float32 variables.")
    flags.DEFINE_integer("grad_accum", 1, "Gradient accumulation steps.")
    flags.DEFINE_integer("seed", 0, "Random seed (data order, augmentation, initialization).")
    flags.DEFINE_string("workdir", workdir, "Output folder; rerunning with the same folder resumes.")
    flags.DEFINE_float("dropout", 0.0, "Dropout rate (0.1 in the paper on ImageNet-21k).")
    flags.DEFINE_enum("loss", "softmax", ["softmax", "sigmoid"], "Cross-entropy form.")
    flags.DEFINE_float("label_smoothing", 0.0, "Label smoothing.")
    flags.DEFINE_float("mixup", 0.0, "MixUp Beta(alpha, alpha); 0 disables.")
    flags.DEFINE_float("crop_min_area", 0.05, "Smallest inception-crop area fraction (the paper: 0.05).")
    flags.DEFINE_bool("randaugment", False, "AugReg-style RandAugment (2 ops per batch).")
    flags.DEFINE_enum("pooling", None, ["token", "gap"], "ViT classifier: class token or mean of tokens.")
    flags.DEFINE_enum("position_embedding", "learned_1d", ["none", "learned_1d", "learned_2d", "relative", "sincos_2d"],
                      "Position information (the paper's Appendix D.4 ablation).")
    flags.DEFINE_enum("posemb_placement", "stem", ["stem", "every_layer", "every_layer_shared"],
                      "Where learned absolute position embeddings are added.")
    flags.DEFINE_integer("representation_size", None, "Width of a tanh pre_logits layer.")
    flags.DEFINE_bool("remat", False, "Recompute encoder-block activations in the backward pass (ViT and "
                      "hybrids): less memory for about a third more compute.")
    flags.DEFINE_integer("preempt_after_steps", None, "Testing: exit abruptly after this many steps.")
    flags.DEFINE_string("verbose", "auto", "Keras fit verbosity: auto, 0, 1 or 2.")


def settings(mode, extra):
    f = flags.FLAGS
    names = ["model", "dataset", "data_dir", "image_size", "batch_size", "steps", "epochs", "steps_per_epoch",
             "lr", "warmup_steps", "strategy", "tpu", "model_parallel", "coordinator_address", "num_processes", "process_id", "mixed_precision", "grad_accum", "seed",
             "workdir", "dropout", "loss", "label_smoothing", "mixup", "randaugment", "crop_min_area", "pooling",
             "representation_size", "preempt_after_steps", "position_embedding", "posemb_placement", "remat"] + extra
    out = {n: f[n].value for n in names}
    out["verbose"] = f.verbose if f.verbose == "auto" else int(f.verbose)
    out["mode"] = mode
    return out


def main_for(mode, extra):
    def main(argv):
        del argv
        from keras_vit.training import run

        try:
            run(**settings(mode, extra))
        except (ValueError, RuntimeError) as e:
            raise SystemExit(f"error: {e}") from None

    return main
