"""ViT-B/16 training throughput and MFU on one GPU, bfloat16 with flash
attention, on the current Keras backend (benchmarks/gpu.sh runs each one).

    KERAS_BACKEND=jax python benchmarks/gpu_step.py --out=bench/gpu_jax.json

MFU = model FLOP/s (3x the forward FLOPs counted from the config) over the
chip's dense bf16 peak (--peak_tflops, the H100/H200 datasheet's 989 by
default); the bf16 matmul rate measured in the same process is reported too,
as the ceiling this software stack reaches.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bf16_matmul_tflops(keras, n=8192, repeats=10):
    import numpy as np

    a = keras.ops.convert_to_tensor(np.random.rand(n, n).astype("float32"), "bfloat16")
    b = keras.ops.convert_to_tensor(np.random.rand(n, n).astype("float32"), "bfloat16")
    from benchmarks.throughput import compiled

    matmul = compiled(keras.ops.matmul)
    for _ in range(3):
        keras.ops.convert_to_numpy(keras.ops.cast(matmul(a, b)[0, 0], "float32"))
    start = time.perf_counter()
    for _ in range(repeats):
        c = matmul(a, b)
    keras.ops.convert_to_numpy(keras.ops.cast(c[0, 0], "float32"))
    return 2 * n**3 * repeats / (time.perf_counter() - start) / 1e12


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="B/16", help="Any variant name; B/16 is the issue's model.")
    parser.add_argument("--image_size", type=int, default=224)
    parser.add_argument("--no_flash", action="store_true", help="Plain attention (CPU smoke runs).")
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--peak_tflops", type=float, default=989.0)
    parser.add_argument("--remat", action="store_true")
    parser.add_argument("--no_compile", action="store_true", help="No torch.compile (quick CPU smoke runs).")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    import keras
    import numpy as np

    import keras_vit
    from benchmarks.throughput import vit_forward_flops

    backend = keras.backend.backend()
    config = keras_vit.decode_variant(args.variant)
    size = args.image_size
    result = {"backend": backend, "variant": args.variant, "image_size": size, "batch_size": args.batch_size,
              "remat": args.remat, "flash_attention": not args.no_flash}
    result["bf16_matmul_tflops"] = bf16_matmul_tflops(keras, n=8192 if args.variant == "B/16" else 512)
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    model = keras_vit.VisionTransformer(**config, input_shape=(size, size, 3), classes=1000,
                                        flash_attention=None if args.no_flash else True, remat=args.remat)
    model.compile(keras.optimizers.AdamW(1e-4), keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile="auto" if args.no_compile else True)
    rng = np.random.default_rng(0)
    # Inputs live on the device, so the host-to-device copy is not timed.
    x = keras.ops.convert_to_tensor(rng.random((args.batch_size, size, size, 3), dtype="float32"), "bfloat16")
    y = keras.ops.convert_to_tensor(rng.integers(0, 1000, args.batch_size), "int32")
    start = time.perf_counter()
    for _ in range(3):
        float(model.train_on_batch(x, y))
    result["compile_and_warmup_s"] = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = model.train_on_batch(x, y)
    float(loss)  # waits for the last step
    seconds = (time.perf_counter() - start) / args.steps
    # The FLOPs executed: the classifier's last block runs the class token
    # only, so MFU is not inflated by the work it skips.
    flops = 3 * vit_forward_flops(dim=config["hidden_size"], mlp=config["mlp_dim"], layers=config["num_layers"],
                                  image=size, patch=config["patch_size"], last_block_queries=1)
    result.update(
        step_ms=seconds * 1e3,
        images_per_s=args.batch_size / seconds,
        model_tflops=args.batch_size * flops / seconds / 1e12,
    )
    result["mfu"] = result["model_tflops"] / args.peak_tflops
    result["fraction_of_measured_matmul"] = result["model_tflops"] / result["bf16_matmul_tflops"]
    print(json.dumps(result, indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
