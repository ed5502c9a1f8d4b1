"""PNG plots with matplotlib (Agg backend, no display needed)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import stats  # noqa: E402


def lines(path, title, xlabel, ylabel, series, published=None, logy=False):
    """SERIES: {label: [(x, [values...]), ...]} drawn as median with a
    min-max band; PUBLISHED: {label: [(x, y), ...]} dashed."""
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    for label, pts in series.items():
        pts = sorted((x, v) for x, v in pts if stats.clean(v))
        if not pts:
            continue
        xs = [x for x, _ in pts]
        med = [stats.median(v) for _, v in pts]
        lo = [min(stats.clean(v)) for _, v in pts]
        hi = [max(stats.clean(v)) for _, v in pts]
        (ln,) = ax.plot(xs, med, marker="o", ms=3, label=label)
        ax.fill_between(xs, lo, hi, alpha=0.15, color=ln.get_color())
    for label, pts in (published or {}).items():
        pts = sorted(pts)
        if pts:
            ax.plot([x for x, _ in pts], [y for _, y in pts], ls="--",
                    marker="x", ms=3, label=label)
    if logy:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def bars(path, title, ylabel, groups):
    """GROUPS: {group label: {bar label: [values]}} as grouped bars of the
    median with min-max error bars."""
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    glabels = list(groups)
    blabels = []
    for g in glabels:
        for b in groups[g]:
            if b not in blabels:
                blabels.append(b)
    width = 0.8 / max(1, len(blabels))
    for i, b in enumerate(blabels):
        xs, ys, lo, hi = [], [], [], []
        for j, g in enumerate(glabels):
            v = stats.clean(groups[g].get(b, []))
            if not v:
                continue
            m = stats.median(v)
            xs.append(j + i * width)
            ys.append(m)
            lo.append(m - min(v))
            hi.append(max(v) - m)
        ax.bar(xs, ys, width, yerr=[lo, hi], label=b, capsize=2)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(glabels))])
    ax.set_xticklabels(glabels, fontsize=7)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def pareto(path, title, panels, xlabel="harm (segments)",
           ylabel="time / fastest baseline's"):
    """PANELS: {panel title: {label: [(x, y), ...]}}, one panel each: the
    points faint, each label's median point large, and the labels whose
    median points no other beats on both axes joined (the Pareto front,
    lower-left is better)."""
    n = max(1, len(panels))
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 4.2), dpi=100,
                             squeeze=False)
    for ax, (name, series) in zip(axes[0], panels.items()):
        meds = {}
        for label, pts in series.items():
            if not pts:
                continue
            xs = [x for x, _ in pts]
            ys = [y for _, y in pts]
            sc = ax.scatter(xs, ys, s=8, alpha=0.25)
            meds[label] = (stats.median(xs), stats.median(ys))
            ax.scatter(*meds[label], s=80, marker="D",
                       color=sc.get_facecolor()[0][:3], edgecolor="black",
                       label=label, zorder=3)
        front = sorted(m for lab, m in meds.items() if not any(
            o[0] <= m[0] and o[1] <= m[1] and o != m
            for o in meds.values()))
        if len(front) > 1:
            ax.plot([x for x, _ in front], [y for _, y in front], ls="--",
                    color="grey", lw=1, zorder=2)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_xscale("symlog", linthresh=1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def seqtime(path, title, series, note=None):
    """A sequence/time plot (the dissertations' figures): SERIES is
    {label: [(seconds, sequence, retransmitted), ...]}, one marker style
    per label, retransmitted segments drawn as red crosses; NOTE, if any,
    goes under the title."""
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    marks = "o^sDv<>"
    for i, (label, pts) in enumerate(series.items()):
        new = [(t, s) for t, s, r in pts if not r]
        old = [(t, s) for t, s, r in pts if r]
        ax.plot([t for t, _ in new], [s for _, s in new], marks[i % 7],
                ms=3, mfc="none", label=label)
        if old:
            ax.plot([t for t, _ in old], [s for _, s in old], "x",
                    color="red", ms=5,
                    label="%s: retransmitted" % label)
    ax.set_title(title + ("\n" + note if note else ""), fontsize=9)
    ax.set_xlabel("seconds since the first data segment")
    ax.set_ylabel("segment (end of its bytes / MSS)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
