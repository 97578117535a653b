#!/usr/bin/env python3
"""Publish cost per event against the number of subscribers, one line per contender, log-log.

    ./chart.py                  # runs the publish benchmarks (~40 s), writes publish-cost.svg
    ./chart.py run.md           # uses a saved `swift package benchmark --format markdown` output

Writes `publish-cost.svg` next to this script (plain SVG, standard library only) and prints the
median wall-clock time per publish as a Markdown table, with each contender's ratio to EventBus.
"""
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COUNTS = [1, 10, 100, 1000]  # N = 0 has no place on a log axis; the table shows it
# Contender -> (label, colour, dashed); drawing order = legend order.
CONTENDERS = {
    "closure-array": ("closure array (floor)", "#7f7f7f", True),
    "EventBus": ("EventBus", "#d62728", False),
    "EventBus-owner-bound": ("EventBus, owner-bound", "#ff9896", False),
    "EventBus-main-actor": ("EventBus, onMainActor (on main)", "#e377c2", False),
    "OpenCombine": ("OpenCombine PassthroughSubject", "#2ca02c", False),
    "MainActorMessage": ("NotificationCenter.MainActorMessage", "#9467bd", False),
    "NotificationCenter-nil": ("NotificationCenter, userInfo nil", "#aec7e8", False),
    "NotificationCenter-userInfo": ("NotificationCenter, userInfo", "#1f77b4", False),
}


def markdown_output():
    if len(sys.argv) > 1:
        with open(sys.argv[1], encoding="utf-8") as f:
            return f.read()
    return subprocess.run(
        ["swift", "package", "benchmark", "--filter", "publish_N=.*", "--format", "markdown", "--no-progress"],
        cwd=HERE, check=True, capture_output=True, text=True,
    ).stdout


UNIT_NS = {"ns": 1, "us": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9}


def parse(text):
    """{(contender, n): median ns per publish} from the Markdown tables."""
    results = {}
    for block in re.split(r"^### ", text, flags=re.M)[1:]:
        name = block.splitlines()[0].strip()
        m = re.fullmatch(r"publish_N=(\d+)_(.+)", name)
        row = re.search(r"\| Time \(wall clock\) \((\w+)\) \*\s*\|([^\n]*)", block)
        if not m or not row:
            continue
        cells = [c.strip() for c in row.group(2).split("|")]
        p50 = float(cells[2]) * UNIT_NS.get(row.group(1), 1)  # p0 p25 p50 ...
        results[(m.group(2), int(m.group(1)))] = p50
    return results


def svg(results):
    width, height = 760, 470
    left, right, top, bottom = 70, 300, 40, 55
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for (c, n), v in results.items() if n in COUNTS and c in CONTENDERS and v > 0]
    y_lo = 10 ** math.floor(math.log10(min(values)))
    y_hi = 10 ** math.ceil(math.log10(max(values)))

    def x(n):
        return left + plot_w * math.log10(n) / math.log10(COUNTS[-1])

    def y(v):
        return top + plot_h * (1 - (math.log10(v) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo)))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="15" font-weight="bold">Publish cost per event (median wall clock, log-log)</text>',
    ]
    decade = y_lo
    while decade <= y_hi * 1.0001:
        yy = y(decade)
        label = f"{decade:g} ns" if decade < 1000 else (f"{decade / 1000:g} µs" if decade < 1e6 else f"{decade / 1e6:g} ms")
        out.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{left + plot_w}" y2="{yy:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{label}</text>')
        decade *= 10
    for n in COUNTS:
        xx = x(n)
        out.append(f'<line x1="{xx:.1f}" y1="{top}" x2="{xx:.1f}" y2="{top + plot_h}" stroke="#ddd"/>')
        out.append(f'<text x="{xx:.1f}" y="{top + plot_h + 18}" text-anchor="middle">{n}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 12}" text-anchor="middle">subscribers (N)</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>')
    legend_y = top + 10
    for contender, (label, colour, dashed) in CONTENDERS.items():
        points = [(x(n), y(results[(contender, n)])) for n in COUNTS if results.get((contender, n), 0) > 0]
        if not points:
            continue
        dash = ' stroke-dasharray="5,4"' if dashed else ""
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for px, py in points:
            out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"/>')
        lx = left + plot_w + 20
        out.append(f'<line x1="{lx}" y1="{legend_y}" x2="{lx + 22}" y2="{legend_y}" stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{lx + 28}" y="{legend_y + 4}">{label}</text>')
        legend_y += 20
    out.append("</svg>")
    return "\n".join(out) + "\n"


def table(results):
    ns = sorted({n for _, n in results})
    lines = ["| contender | " + " | ".join(f"N={n}" for n in ns) + " |", "|---|" + "---:|" * len(ns)]
    for contender in CONTENDERS:
        cells = []
        for n in ns:
            v = results.get((contender, n))
            base = results.get(("EventBus", n))
            if v is None:
                cells.append("")
            elif contender != "EventBus" and base and v > 0:
                cells.append(f"{v:,.0f} ns ({v / base:.1f}×)")
            else:
                cells.append(f"{v:,.0f} ns")
        lines.append(f"| {CONTENDERS[contender][0]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    results = parse(markdown_output())
    if not results:
        sys.exit("chart.py: no publish_N=… results found")
    with open(os.path.join(HERE, "publish-cost.svg"), "w", encoding="utf-8") as f:
        f.write(svg(results))
    print(table(results))
    print("\nwrote Benchmarks/publish-cost.svg")


if __name__ == "__main__":
    main()
