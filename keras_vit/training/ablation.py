"""The paper's position-embedding ablation (Appendix D.4, Table 8), at the
scale of the machine: the same model and schedule, one run per variant and
seed, validation accuracy as the table's entries."""
import os

import numpy as np

from keras_vit.training.experiment import run

# (position_embedding, placement) rows/columns of Table 8.
VARIANTS = [
    ("none", "stem"),
    ("learned_1d", "stem"), ("learned_1d", "every_layer"), ("learned_1d", "every_layer_shared"),
    ("learned_2d", "stem"), ("learned_2d", "every_layer"), ("learned_2d", "every_layer_shared"),
    ("relative", "stem"),
    ("sincos_2d", "stem"),
]
ROW_NAMES = {
    "none": "none", "learned_1d": "1-D learned", "learned_2d": "2-D learned",
    "relative": "relative (1-D)", "sincos_2d": "2-D sine-cosine (fixed)",
}
COLUMNS = [("stem", "at the stem"), ("every_layer", "every layer"), ("every_layer_shared", "every layer, shared")]


def run_ablation(workdir, seeds=(0, 1), variants=VARIANTS, **settings):
    """Trains every (variant, seed) with `settings` (as `run`), one workdir
    each (`workdir/<variant>-<placement>-s<seed>`): finished runs are reused
    and interrupted ones resume."""
    results = {}
    for kind, placement in variants:
        results[(kind, placement)] = [
            run(**dict(settings, position_embedding=kind, posemb_placement=placement, seed=seed,
                       workdir=os.path.join(workdir, f"{kind}-{placement}-s{seed}")))["val_accuracy"]
            for seed in seeds
        ]
    return results


def write_table(results, md_path, png_path, title):
    """Table 8's layout: mean ± std of validation accuracy over seeds."""
    seeds = len(next(iter(results.values())))

    def cell(kind, placement):
        accs = results.get((kind, placement))
        if accs is None:
            return "–"
        return f"{100 * np.mean(accs):.1f} ± {100 * np.std(accs):.1f}"

    kinds = list(dict.fromkeys(k for k, _ in results))
    lines = [f"{title} ({seeds} seeds, validation accuracy %, mean ± std)", "",
             "| | " + " | ".join(name for _, name in COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for kind in kinds:
        lines.append(f"| {ROW_NAMES[kind]} | " + " | ".join(cell(kind, p) for p, _ in COLUMNS) + " |")
    with open(md_path, "w") as f:
        f.write("\n".join(lines) + "\n")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{ROW_NAMES[k]}\n{p.replace('_', ' ')}" for k, p in results]
    means = [100 * np.mean(v) for v in results.values()]
    stds = [100 * np.std(v) for v in results.values()]
    fig, ax = plt.subplots(figsize=(11, 4))
    ax.bar(range(len(means)), means, yerr=stds, capsize=4, color="#4c72b0")
    ax.set_xticks(range(len(means)), labels, fontsize=7)
    ax.set_ylabel("validation accuracy (%)")
    ax.set_ylim(max(0, min(means) - 10), 100)
    ax.set_title(f"{title} ({seeds} seeds)")
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)
    plt.close(fig)
    return "\n".join(lines)
