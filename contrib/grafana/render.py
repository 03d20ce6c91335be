#!/usr/bin/python3
"""Draws a Grafana dashboard's panels from a Prometheus server into a PNG, without Grafana.

Grafana is not packaged for Debian; this reads the dashboard JSON (contrib/grafana/pfcswitch.json),
runs each panel's queries through Prometheus's HTTP API (/api/v1/query_range, /api/v1/query for
tables) with the template variables replaced, and draws the panels where the dashboard's grid
puts them: time series with their legends, units, dashed overrides and alert thresholds (lines
and areas, as `thresholdsStyle` says), stats, state timelines, tables and text. It is a picture
of what the dashboard shows, not a Grafana: panel options it does not know are ignored.

    ./render.py pfcswitch.json --prometheus http://127.0.0.1:9090 --last 15m -o dashboard.png
    ./render.py pfcswitch.json --prometheus URL --start 1700000000 --end 1700000060 \
        --step 1s --rate-interval 4s --var priority=3 -o dashboard.png

Variables: `$instance`, `$port`, `$priority` (and any other query variable) are `All` (`.*`)
unless --var NAME=REGEX sets them; `$__rate_interval` is --rate-interval (default: 4 × step,
at least 4 s, Grafana's rule for a 1 s scrape interval), `$__interval` is --step.

Needs Python 3 and matplotlib: `apt-get install python3-matplotlib` (Debian's /usr/bin/python3).
docs/dashboard.md has the commands that made docs/images/dashboard.png.
"""

import argparse
import datetime
import json
import math
import re
import sys
import textwrap
import time
import urllib.parse
import urllib.request

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    from matplotlib.patches import Rectangle
except ImportError:
    sys.exit(
        f"render.py needs matplotlib, which {sys.executable} cannot import: "
        "apt-get install python3-matplotlib (then run it with Debian's /usr/bin/python3)"
    )

# Grafana's dark theme and classic palette.
BACKGROUND = "#111217"
PANEL = "#181b1f"
BORDER = "#2c3235"
TEXT = "#ccccdc"
MUTED = "#8e8e9a"
PALETTE = ["#7EB26D", "#EAB839", "#6ED0E0", "#EF843C", "#E24D42", "#1F78C1", "#BA43A9", "#705DA0",
           "#508642", "#CCA300", "#447EBC", "#C15C17", "#890F02", "#0A437C", "#6D1F62", "#584477"]
NAMED = {"red": "#F2495C", "green": "#73BF69", "orange": "#FF9830", "yellow": "#FADE2A", "blue": "#5794F2",
         "purple": "#B877D9", "dark-red": "#C4162A", "transparent": None, "text": TEXT}

# One grid unit: 24 columns across the figure; Grafana's rows are 30 px high.
COLUMN_IN = 0.78
ROW_IN = 0.36
LEGEND_MAX = 12


def color(name):
    if name is None:
        return None
    return NAMED.get(name, name)


def num(seconds):
    """Unix seconds as matplotlib's date number."""
    return mdates.date2num(datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc))


def time_axis(axes, start, end):
    axes.set_xlim(num(start), num(end))
    axes.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(5))
    axes.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S", tz=datetime.timezone.utc))


def parse_duration(text):
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)", text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text} (e.g. 1s, 5m)")
    return float(match.group(1)) * units[match.group(2)]


def prom_duration(seconds):
    return f"{int(seconds * 1000)}ms" if seconds < 1 or seconds != int(seconds) else f"{int(seconds)}s"


class Prometheus:
    def __init__(self, url):
        self.url = url.rstrip("/")

    def get(self, path, **params):
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=30) as response:
                answer = json.load(response)
        except Exception as error:  # noqa: BLE001 - every failure is the same to the user
            sys.exit(f"render.py: {url}: {error}")
        if answer.get("status") != "success":
            sys.exit(f"render.py: {url}: {answer}")
        return answer["data"]


def substitute(expr, variables):
    def value(match):
        name = match.group(1) or match.group(2)
        if name not in variables:
            sys.exit(f"render.py: unknown template variable ${name} in {expr}")
        return variables[name]

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", value, expr)


def legend(fmt, metric):
    if not fmt:
        labels = {k: v for k, v in metric.items() if k != "__name__"}
        inside = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        return f"{metric.get('__name__', '')}{{{inside}}}"
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: metric.get(m.group(1), ""), fmt)


# ---- units (a subset of Grafana's)

def si(value, suffix, base=1000, prefixes=("", "k", "M", "G", "T")):
    if value == 0 or not math.isfinite(value):
        return f"0 {suffix}".strip()
    magnitude = abs(value)
    index = 0
    while magnitude >= base and index < len(prefixes) - 1:
        magnitude /= base
        value /= base
        index += 1
    text = f"{value:.3g}"
    return f"{text} {prefixes[index]}{suffix}".strip()


def fmt_unit(value, unit, decimals=None):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if unit == "bytes":
        return si(value, "B", 1024, ("", "Ki", "Mi", "Gi", "Ti"))
    if unit == "bps":
        return si(value, "b/s")
    if unit == "pps":
        return si(value, "p/s")
    if unit == "percentunit":
        return f"{value * 100:.3g}%"
    if unit == "s":
        magnitude = abs(value)
        if magnitude == 0:
            return "0 s"
        if magnitude < 1e-3:
            return f"{value * 1e6:.3g} µs"
        if magnitude < 1:
            return f"{value * 1e3:.3g} ms"
        if magnitude < 3600:
            return f"{value:.3g} s"
        return f"{value / 3600:.3g} h"
    if decimals is not None:
        return f"{value:.{decimals}f}"
    return si(value, "")


# ---- drawing

def panel_axes(fig, grid, total_rows, title):
    """The panel's frame with its title, and the axes inside it (figure coordinates)."""
    x, y, w, h = grid["x"], grid["y"], grid["w"], grid["h"]
    left, width = x / 24, w / 24
    top = 1 - y / total_rows
    height = h / total_rows
    pad_x, pad_y = 0.003, 0.0015
    frame = fig.add_axes([left + pad_x, top - height + pad_y, width - 2 * pad_x, height - 2 * pad_y])
    frame.set_xticks([])
    frame.set_yticks([])
    frame.set_facecolor(PANEL)
    for spine in frame.spines.values():
        spine.set_color(BORDER)
    frame.text(0.012, 0.985, title, transform=frame.transAxes, va="top", ha="left", color=TEXT, fontsize=8.5,
               fontweight="bold")
    return frame, (left + pad_x, top - height + pad_y, width - 2 * pad_x, height - 2 * pad_y)


def inner(fig, box, left=0.09, bottom=0.1, right=0.02, top=0.11):
    x, y, w, h = box
    axes = fig.add_axes([x + w * left, y + h * bottom, w * (1 - left - right), h * (1 - bottom - top)])
    axes.set_facecolor(PANEL)
    for spine in axes.spines.values():
        spine.set_color(BORDER)
    axes.tick_params(colors=MUTED, labelsize=6.5, length=2)
    axes.grid(True, color=BORDER, linewidth=0.5)
    return axes


def thresholds_of(panel):
    defaults = panel.get("fieldConfig", {}).get("defaults", {})
    steps = defaults.get("thresholds", {}).get("steps", [])
    style = defaults.get("custom", {}).get("thresholdsStyle", {}).get("mode", "off")
    return steps, style


def overrides_of(panel, name):
    """(dashed, negative) for a series name, from byRegexp/byName overrides."""
    dashed = negative = False
    for override in panel.get("fieldConfig", {}).get("overrides", []):
        matcher = override.get("matcher", {})
        option = matcher.get("options", "")
        if matcher.get("id") == "byRegexp":
            hit = re.fullmatch(option, name) is not None
        elif matcher.get("id") == "byName":
            hit = option == name
        else:
            hit = False
        if not hit:
            continue
        for prop in override.get("properties", []):
            if prop.get("id") == "custom.lineStyle" and prop.get("value", {}).get("fill") == "dash":
                dashed = True
            if prop.get("id") == "custom.transform" and prop.get("value") == "negative-Y":
                negative = True
    return dashed, negative


def draw_timeseries(fig, box, panel, series, start, end):
    defaults = panel.get("fieldConfig", {}).get("defaults", {})
    unit = defaults.get("unit", "short")
    n = len(series)
    legend_rows = min(n, LEGEND_MAX) if n else 1
    legend_cols = 2 if n > 4 else 1
    legend_lines = math.ceil(legend_rows / legend_cols) + (1 if n > LEGEND_MAX else 0)
    bottom = min(0.55, 0.1 + 0.062 * legend_lines * (8 / panel["gridPos"]["h"]))
    axes = inner(fig, box, left=0.13 if box[2] < 0.25 else 0.1, bottom=bottom)
    lows, highs = [0.0], [0.0]
    handles = []
    options = panel.get("options", {}).get("legend", {})
    show_max = "max" in options.get("calcs", [])
    maxima = {name: max((v for v in values if math.isfinite(v)), default=math.nan) for name, _, values in series}
    if options.get("sortBy") == "Max":
        descending = options.get("sortDesc", False)

        def by_max(item):
            peak = maxima[item[0]]
            return (True, 0.0) if math.isnan(peak) else (False, -peak if descending else peak)

        series = sorted(series, key=by_max)
    for index, (name, times, values) in enumerate(series):
        dashed, negative = overrides_of(panel, name)
        if negative:
            values = [-v if v is not None else None for v in values]
        line_color = PALETTE[index % len(PALETTE)]
        dates = [num(t) for t in times]
        label = f"{name}   max {fmt_unit(maxima[name], unit)}" if show_max else name
        (line,) = axes.plot(dates, [v if v is not None else math.nan for v in values], color=line_color,
                            linewidth=1.0, linestyle=(0, (4, 3)) if dashed else "-", label=label)
        if not dashed:
            axes.fill_between(dates, [v if v is not None else math.nan for v in values], 0, color=line_color,
                              alpha=0.08, linewidth=0)
        handles.append(line)
        finite = [v for v in values if v is not None and math.isfinite(v)]
        if finite:
            lows.append(min(finite))
            highs.append(max(finite))
    steps, style = thresholds_of(panel)
    marks = [s for s in steps if s.get("value") is not None and color(s.get("color")) is not None]
    if style != "off":
        highs.extend(s["value"] * 1.25 for s in marks)
    low, high = min(lows), max(highs)
    if "min" in defaults:
        low = defaults["min"]
    if "max" in defaults:
        high = defaults["max"]
    if high <= low:
        high = low + 1
    span = high - low
    axes.set_ylim(low - (0.03 * span if low < 0 else 0), high + 0.05 * span)
    if style != "off":
        for step in marks:
            mark = color(step["color"])
            if "line" in style or "dashed" in style:
                axes.axhline(step["value"], color=mark, linewidth=1.1,
                             linestyle=(0, (5, 3)) if "dashed" in style else "-")
            if "area" in style:
                axes.axhspan(step["value"], axes.get_ylim()[1], color=mark, alpha=0.12, linewidth=0)
    time_axis(axes, start, end)
    axes.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4))
    axes.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: fmt_unit(v, unit)))
    if not series:
        axes.text(0.5, 0.5, "No data", transform=axes.transAxes, ha="center", va="center", color=MUTED)
    shown = handles[:LEGEND_MAX]
    labels = [h.get_label() for h in shown]
    if n > LEGEND_MAX:
        extra = Rectangle((0, 0), 0, 0, alpha=0)
        shown.append(extra)
        labels.append(f"… {n - LEGEND_MAX} more")
    if shown:
        legend_box = axes.legend(shown, labels, loc="upper left", bbox_to_anchor=(-0.08, -0.1), ncol=legend_cols,
                                 fontsize=5.8, frameon=False, labelcolor=TEXT, handlelength=1.6,
                                 columnspacing=1.0, borderaxespad=0.2)
        legend_box.set_in_layout(False)


def draw_stat(fig, box, panel, series):
    defaults = panel.get("fieldConfig", {}).get("defaults", {})
    unit, decimals = defaults.get("unit", "short"), defaults.get("decimals")
    steps = defaults.get("thresholds", {}).get("steps", [])
    values = [v for (_, _, vs) in series for v in vs[-1:] if v is not None]
    value = sum(values) if len(values) > 1 else (values[0] if values else None)
    background = None
    for step in steps:
        if step.get("value") is None or (value is not None and value >= step["value"]):
            background = color(step.get("color"))
    x, y, w, h = box
    axes = fig.add_axes([x + 0.002, y + 0.002, w - 0.004, h * 0.8 - 0.002])
    axes.set_xticks([])
    axes.set_yticks([])
    axes.set_facecolor(background or PANEL)
    for spine in axes.spines.values():
        spine.set_visible(False)
    if series and len(series[0][2]) > 1:
        _, times, vals = series[0]
        spark = [v if v is not None else math.nan for v in vals]
        axes.fill_between(times, spark, min(v for v in spark if not math.isnan(v)) if any(
            not math.isnan(v) for v in spark) else 0, color="white", alpha=0.15, linewidth=0)
        axes.set_xlim(times[0], times[-1])
        finite = [v for v in spark if not math.isnan(v)]
        if finite:
            top = max(finite)
            bottom = min(finite)
            axes.set_ylim(bottom, top + (top - bottom) * 2.0 + 1e-9)
    axes.text(0.5, 0.5, "No data" if value is None else fmt_unit(value, unit, decimals), transform=axes.transAxes,
              ha="center", va="center", color="white" if background else TEXT, fontsize=17, fontweight="bold")


def draw_timeline(fig, box, panel, series, start, end):
    mappings = {}
    for mapping in panel.get("fieldConfig", {}).get("defaults", {}).get("mappings", []):
        for key, option in mapping.get("options", {}).items():
            mappings[key] = (option.get("text", key), color(option.get("color")))
    axes = inner(fig, box, left=0.3, bottom=0.12, top=0.1)
    axes.grid(False)
    rows = series[:16]
    for index, (name, times, values) in enumerate(rows):
        row = len(rows) - 1 - index
        for t0, t1, v in zip(times, times[1:] + [times[-1] + 1 if times else end], values):
            if v is None:
                continue
            key = str(int(v)) if float(v).is_integer() else str(v)
            text, fill = mappings.get(key, (key, PALETTE[0]))
            if fill is None:
                continue
            axes.add_patch(Rectangle((num(t0), row + 0.08), num(t1) - num(t0), 0.84, color=fill, linewidth=0,
                                     alpha=0.85))
    axes.set_ylim(0, max(len(rows), 1))
    axes.set_yticks([len(rows) - 1 - i + 0.5 for i in range(len(rows))])
    axes.set_yticklabels([name for name, _, _ in rows], fontsize=6, color=TEXT)
    time_axis(axes, start, end)
    shown = [(text, fill) for text, fill in mappings.values() if fill]
    for index, (text, fill) in enumerate(shown):
        axes.text(1.0 - 0.14 * (len(shown) - index), 1.03, f"■ {text}", transform=axes.transAxes, color=fill,
                  fontsize=6.5, va="bottom")
    if not series:
        axes.text(0.5, 0.5, "No data", transform=axes.transAxes, ha="center", va="center", color=MUTED)


def table_rows(panel, results):
    """Rows of a table panel from instant results per refId, after merge/organize/sortBy."""
    frames = []
    for ref_id, result in results:
        frame = []
        for sample in result:
            row = {k: v for k, v in sample["metric"].items()}
            row["Time"] = sample["value"][0]
            row[f"Value #{ref_id}" if len(results) > 1 else "Value"] = float(sample["value"][1])
            frame.append(row)
        frames.append(frame)
    rows = [r for frame in frames for r in frame]
    transformations = panel.get("transformations", [])
    if any(t["id"] == "merge" for t in transformations):
        merged = {}
        for row in rows:
            key = tuple(sorted((k, v) for k, v in row.items() if not k.startswith("Value") and k not in
                               ("Time", "__name__")))
            merged.setdefault(key, {}).update(row)
        rows = list(merged.values())
    columns = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    for transformation in transformations:
        options = transformation.get("options", {})
        if transformation["id"] == "organize":
            excluded = options.get("excludeByName", {})
            columns = [c for c in columns if not excluded.get(c)]
            order = options.get("indexByName", {})
            columns.sort(key=lambda c: order.get(c, 100))
            renames = options.get("renameByName", {})
            rows = [{renames.get(k, k): v for k, v in row.items()} for row in rows]
            columns = [renames.get(c, c) for c in columns]
        elif transformation["id"] == "sortBy":
            for sort in reversed(options.get("sort", [])):
                field = sort.get("field")
                rows.sort(key=lambda r, f=field: (r.get(f) is None, r.get(f) or 0), reverse=sort.get("desc", False))
    return columns, rows


def draw_table(fig, box, panel, results):
    unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "short")
    columns, rows = table_rows(panel, results)
    x, y, w, h = box
    axes = fig.add_axes([x + w * 0.02, y + h * 0.03, w * 0.96, h * 0.84])
    axes.axis("off")
    max_rows = max(1, int(panel["gridPos"]["h"] * 1.6) - 2)
    shown = rows[:max_rows]
    cells = [[fmt_unit(r.get(c), unit) if isinstance(r.get(c), float) else str(r.get(c, "")) for c in columns]
             for r in shown]
    if not cells:
        axes.text(0.5, 0.5, "No data", ha="center", va="center", color=MUTED)
        return
    table = axes.table(cellText=cells, colLabels=columns, loc="upper left", cellLoc="left", colLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(6.3)
    for (row, _), cell in table.get_celld().items():
        cell.set_edgecolor(BORDER)
        cell.set_facecolor(PANEL if row else "#22252b")
        cell.get_text().set_color(TEXT)
        cell.set_height(1.0 / (max_rows + 1))
    if len(rows) > max_rows:
        axes.text(1.0, -0.02, f"… {len(rows) - max_rows} more rows", ha="right", va="top", color=MUTED, fontsize=6,
                  transform=axes.transAxes)


def draw_text(fig, box, panel):
    content = panel.get("options", {}).get("content", "")
    content = re.sub(r"```\n?", "", content).replace("`", "")
    x, y, w, h = box
    axes = fig.add_axes([x + w * 0.03, y + h * 0.03, w * 0.94, h * 0.82])
    axes.axis("off")
    width = max(20, int(w * 24 * 5.2))
    wrapped = "\n".join(textwrap.fill(p, width) if p.strip() else "" for p in content.split("\n"))
    axes.text(0, 1, wrapped, va="top", ha="left", color=TEXT, fontsize=6.8, family="DejaVu Sans")


def walk(panels):
    for panel in panels:
        yield panel
        yield from walk(panel.get("panels", []))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dashboard", help="the dashboard's JSON (contrib/grafana/pfcswitch.json)")
    parser.add_argument("--prometheus", required=True, help="Prometheus base URL, e.g. http://127.0.0.1:9090")
    parser.add_argument("--start", type=float, help="unix seconds")
    parser.add_argument("--end", type=float, help="unix seconds (default: now)")
    parser.add_argument("--last", type=parse_duration, default=parse_duration("15m"),
                        help="range before --end when --start is not given (default 15m)")
    parser.add_argument("--step", type=parse_duration, default=None, help="resolution (default: range / 300)")
    parser.add_argument("--rate-interval", type=parse_duration, default=None,
                        help="$__rate_interval (default: 4 × step, at least 4s)")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=REGEX",
                        help="a template variable's value (default: All, .*); repeatable")
    parser.add_argument("-o", "--output", default="dashboard.png", help="the picture (PNG, SVG, PDF)")
    parser.add_argument("--dpi", type=int, default=110)
    args = parser.parse_args()

    dashboard = json.load(open(args.dashboard))
    end = args.end or time.time()
    start = args.start or end - args.last
    step = args.step or max(1.0, round((end - start) / 300))
    rate_interval = args.rate_interval or max(4 * step, 4.0)
    variables = {"__rate_interval": prom_duration(rate_interval), "__interval": prom_duration(step),
                 "__range": prom_duration(end - start), "datasource": ""}
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") == "query":
            variables[variable["name"]] = variable.get("allValue") or ".*"
    for assignment in args.var:
        name, _, value = assignment.partition("=")
        variables[name] = value
    prometheus = Prometheus(args.prometheus)

    panels = list(walk(dashboard["panels"]))
    total_rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels)
    header = 1.2
    fig = plt.figure(figsize=(24 * COLUMN_IN, (total_rows + header) * ROW_IN), facecolor=BACKGROUND)
    total = total_rows + header
    chosen = ", ".join(f"{k}={v}" for k, v in sorted(variables.items())
                       if not k.startswith("__") and k != "datasource")
    span = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(start)) + " – " + time.strftime(
        "%H:%M:%S UTC", time.gmtime(end))
    fig.text(0.005, 1 - 0.3 / total, dashboard.get("title", ""), color=TEXT, fontsize=13, fontweight="bold",
             va="top")
    fig.text(0.995, 1 - 0.3 / total, f"{span}   step {prom_duration(step)}   {chosen}", color=MUTED, fontsize=8,
             va="top", ha="right")
    queries = 0
    for panel in panels:
        grid = dict(panel["gridPos"])
        grid["y"] = grid["y"] + header
        if panel["type"] == "row":
            fig.text(grid["x"] / 24 + 0.004, 1 - (grid["y"] + 0.55) / total, panel.get("title", ""), color=TEXT,
                     fontsize=10.5, fontweight="bold", va="center")
            continue
        _, box = panel_axes(fig, grid, total, panel.get("title", ""))
        if panel["type"] == "text":
            draw_text(fig, box, panel)
            continue
        instant = panel["type"] == "table"
        series, results = [], []
        for target in panel.get("targets", []):
            expr = substitute(target["expr"], variables)
            queries += 1
            if instant:
                data = prometheus.get("/api/v1/query", query=expr, time=end)
                results.append((target.get("refId", "A"), data["result"]))
                continue
            data = prometheus.get("/api/v1/query_range", query=expr, start=start, end=end, step=step)
            for item in data["result"]:
                times = [float(t) for t, _ in item["values"]]
                values = [float(v) for _, v in item["values"]]
                series.append((legend(target.get("legendFormat", ""), item["metric"]), times, values))
        series.sort(key=lambda s: s[0])
        if panel["type"] == "timeseries":
            draw_timeseries(fig, box, panel, series, start, end)
        elif panel["type"] == "stat":
            draw_stat(fig, box, panel, series)
        elif panel["type"] == "state-timeline":
            draw_timeline(fig, box, panel, series, start, end)
        elif panel["type"] == "table":
            draw_table(fig, box, panel, results)
    fig.savefig(args.output, dpi=args.dpi, facecolor=BACKGROUND)
    if args.output.endswith(".png"):
        # A third of the size in 256 colours (PIL comes with matplotlib): the panels have few.
        from PIL import Image

        with Image.open(args.output) as picture:
            flat = picture.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        flat.save(args.output, optimize=True)
    print(f"{len([p for p in panels if p['type'] != 'row'])} panels, {queries} queries over "
          f"{end - start:.0f} s at {prom_duration(step)} steps ($__rate_interval {prom_duration(rate_interval)})")


if __name__ == "__main__":
    main()
