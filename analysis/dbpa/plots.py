"""The DBPA report's figure (seed 001): ROC curves of the decisions, one per configuration."""

from __future__ import annotations

from analysis.common.png import png_bytes


def roc_data(curves: dict[str, tuple], title: str):
    """The ROC curves as series (the same points `roc_png` draws), for the terminal."""
    from analysis.common.plotdata import PlotData, Series

    series = [Series("chance", (0.0, 1.0), (0.0, 1.0))]
    notes = []
    for config, (fpr, tpr, auc) in curves.items():
        series.append(Series(f"{config} (AUC {auc:.2f})", tuple(float(v) for v in fpr),
                             tuple(float(v) for v in tpr)))
        notes.append(f"{config}: AUC {auc:.3f} over {len(fpr)} points")
    return PlotData(title, "FPR (should-not-change rejected)", "TPR (should-change rejected)",
                    tuple(series), xlim=(0.0, 1.0), ylim=(0.0, 1.0), notes=tuple(notes))


def roc_png(curves: dict[str, tuple], title: str) -> bytes:
    """ROC curves (one per configuration: (fpr, tpr, auc)) as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 5.0), dpi=120)
    try:
        ax.plot([0, 1], [0, 1], color="#999999", lw=1, ls="--", label="chance")
        for config, (fpr, tpr, auc) in curves.items():
            ax.plot(fpr, tpr, lw=1.6, marker=".", label=f"{config} (AUC {auc:.2f})")
        ax.set_xlabel("FPR (should-not-change perturbations rejected)")
        ax.set_ylabel("TPR (should-change perturbations rejected)")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
        return png_bytes(fig, bbox_inches="tight")
    finally:
        plt.close(fig)
