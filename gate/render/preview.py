"""A preview of a PR comment away from GitHub: an HTML page rendered with GitHub's own
Markdown engine (cmark-gfm). (The terminal's text is written from the view in the plain style,
`gate.render.plain`, not from the Markdown.)

GitHub draws ```mermaid blocks itself; offline there is no Mermaid, so the preview draws the
same numbers of an `xychart-beta` bar chart as an inline SVG. GitHub also colours the lines
of a ```diff block (its syntax highlighter runs after cmark-gfm); the preview colours them the
same way, with GitHub's colours.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

# A chart's fences start their lines: "```mermaid" quoted inside a diff line is text.
_MERMAID = re.compile(r"^```mermaid\n(.*?)^```$", re.DOTALL | re.MULTILINE)
_BRACKETS = re.compile(r"\[(.*?)\]")

CSS = """
body { font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial,
  sans-serif, "Apple Color Emoji", "Noto Color Emoji"; font-size: 14px; line-height: 1.5;
  color: #1f2328; background: #f6f8fa; margin: 0; padding: 24px; }
.comment { max-width: 900px; margin: 0 auto; background: #fff; border: 1px solid #d1d9e0;
  border-radius: 6px; }
.comment header { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px;
  color: #59636e; border-radius: 6px 6px 0 0; }
.markdown-body { padding: 16px; overflow-wrap: break-word; }
.markdown-body h1, .markdown-body h2, .markdown-body h3 { margin: 24px 0 16px; font-weight: 600;
  line-height: 1.25; }
.markdown-body h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; }
.markdown-body h3 { font-size: 1.25em; }
.markdown-body p, .markdown-body ul, .markdown-body ol, .markdown-body table,
.markdown-body details, .markdown-body pre { margin: 0 0 16px; }
.markdown-body table { border-spacing: 0; border-collapse: collapse; display: block;
  width: max-content; max-width: 100%; overflow: auto; }
.markdown-body th, .markdown-body td { padding: 6px 13px; border: 1px solid #d1d9e0; }
.markdown-body th { font-weight: 600; }
.markdown-body tr:nth-child(2n) { background: #f6f8fa; }
.markdown-body code { padding: .2em .4em; font-size: 85%; background: #eff1f3;
  border-radius: 6px; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.markdown-body pre { padding: 16px; overflow: auto; font-size: 85%; background: #f6f8fa;
  border-radius: 6px; }
.markdown-body pre code { padding: 0; background: transparent; }
.markdown-body summary { cursor: pointer; }
.markdown-body blockquote { margin: 0 0 16px; padding: 0 1em; color: #59636e;
  border-left: .25em solid #d1d9e0; }
.markdown-body a { color: #0969da; text-decoration: none; }
.chart { margin: 0 0 16px; }
.pl-md { color: #82071e; background-color: #ffebe9; }
.pl-mi1 { color: #116329; background-color: #dafbe1; }
.pl-mdr { color: #6639ba; font-weight: bold; }
"""


@dataclass
class BarChart:
    title: str
    labels: list[str]
    series: list[list[float]]
    lines: list[list[float]]


def parse_xychart(source: str) -> BarChart | None:
    """The numbers of a Mermaid `xychart-beta` bar chart, or None for other diagrams."""
    lines = [line.strip() for line in source.strip().splitlines()]
    if not lines or not lines[0].startswith("xychart"):
        return None
    title = ""
    labels: list[str] = []
    series: list[list[float]] = []
    lines_: list[list[float]] = []
    for line in lines[1:]:
        if line.startswith("title"):
            title = line.removeprefix("title").strip().strip('"')
        elif line.startswith("x-axis") and (match := _BRACKETS.search(line)):
            labels = [x.strip().strip('"') for x in match.group(1).split(",")]
        elif line.startswith(("bar", "line")) and (match := _BRACKETS.search(line)):
            values = [float(x) for x in match.group(1).split(",") if x.strip()]
            (series if line.startswith("bar") else lines_).append(values)
    return BarChart(title, labels, series, lines_) if labels and (series or lines_) else None


def chart_svg(chart: BarChart, width: int = 640, height: int = 240) -> str:
    """Grouped bars and lines on a 0-100 scale, as Mermaid's xychart draws them."""
    colours = ["#0969da", "#8c959f", "#1a7f37", "#bf8700"]
    left, bottom, top = 40, 40, 30
    plot_w, plot_h = width - left - 10, height - bottom - top
    group = plot_w / max(len(chart.labels), 1)
    bar = group * 0.8 / max(len(chart.series), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{html.escape(chart.title)}" font-size="11" '
        'font-family="sans-serif">',
        f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="13">'
        f"{html.escape(chart.title)}</text>",
    ]
    for tick in (0, 50, 100):
        y = top + plot_h * (1 - tick / 100)
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y}" y2="{y}" stroke="#d1d9e0"/>')
        parts.append(f'<text x="{left - 4}" y="{y + 4}" text-anchor="end">{tick}</text>')
    for i, label in enumerate(chart.labels):
        x0 = left + i * group + group * 0.1
        for s, values in enumerate(chart.series):
            value = values[i] if i < len(values) else 0.0
            h = plot_h * max(0.0, min(value, 100.0)) / 100
            parts.append(
                f'<rect x="{x0 + s * bar:.1f}" y="{top + plot_h - h:.1f}" width="{bar - 2:.1f}" '
                f'height="{h:.1f}" fill="{colours[s % len(colours)]}"><title>'
                f"{html.escape(label)}: {value:g}</title></rect>"
            )
        parts.append(
            f'<text x="{x0 + group * 0.4:.1f}" y="{height - bottom + 16}" text-anchor="middle">'
            f"{html.escape(label)}</text>"
        )
    for s, values in enumerate(chart.lines):
        points = " ".join(
            f"{left + (i + 0.5) * group:.1f},{top + plot_h * (1 - min(max(v, 0), 100) / 100):.1f}"
            for i, v in enumerate(values[: len(chart.labels)])
        )
        colour = "#cf222e" if s == 0 else colours[(s + 2) % len(colours)]
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>'
        )
        for point in points.split():
            cx, cy = point.split(",")
            parts.append(f'<circle cx="{cx}" cy="{cy}" r="3" fill="{colour}"/>')
    parts.append("</svg>")
    return "".join(parts)


def _charts_as_html(markdown: str) -> str:
    def replace(match: re.Match[str]) -> str:
        chart = parse_xychart(match.group(1))
        if chart is None:
            return match.group(0)
        return f'<div class="chart">{chart_svg(chart)}</div>\n'

    return _MERMAID.sub(replace, markdown)


def render_gfm(markdown: str) -> str:
    """GitHub's own engine, with raw HTML kept as GitHub keeps `<details>`."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


_DIFF_HTML = re.compile(r'(<pre lang="diff"><code>)(.*?)(</code></pre>)', re.DOTALL)
_DIFF_CLASS = {"-": "pl-md", "+": "pl-mi1", "@": "pl-mdr"}


def colour_diffs(page: str) -> str:
    """Colour the lines of rendered ```diff blocks as GitHub does (the text is already
    HTML-escaped by cmark-gfm; only whole lines are wrapped in spans)."""

    def lines(match: re.Match[str]) -> str:
        out = []
        for line in match.group(2).split("\n"):
            css = _DIFF_CLASS.get(line[:1])
            out.append(f'<span class="{css}">{line}</span>' if css and line else line)
        return match.group(1) + "\n".join(out) + match.group(3)

    return _DIFF_HTML.sub(lines, page)


def html_page(markdown: str, *, title: str, author: str = "eval-gate[bot]") -> str:
    body = colour_diffs(render_gfm(_charts_as_html(markdown)))
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
        f'<div class="comment"><header><strong>{html.escape(author)}</strong> commented</header>'
        f'<div class="markdown-body">{body}</div></div></body></html>\n'
    )
