"""The one bar chart the benchmarks draw: seconds per measured thing, saved under results/."""
from __future__ import annotations

import os
from typing import Optional, Sequence

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
PAIMON, BASELINE, FLOOR = "#3b6ea8", "#9aa5b1", "#d9a441"


def save_bars(name: str, labels: Sequence[str], values: Sequence[float], title: str,
              colors: Optional[Sequence[str]] = None, ylabel: str = "seconds") -> str:
    """Draw ``values`` as bars and save ``results/<name>.png``; returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.4 * len(labels) + 1.5, 3.5))
    ax.bar(list(labels), list(values), color=list(colors) if colors else PAIMON)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, f"{name}.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
