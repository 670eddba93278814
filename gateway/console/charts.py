"""Charts as inline SVG, drawn on the server: a time series (freshness, throughput) and the lineage graph. No
library, no script, nothing fetched: the page is complete as sent. Every label goes through `esc`.

A series of thousands of points (one per micro-batch) is thinned to at most `MAX_POINTS` evenly spaced ones, the
newest always kept, so a page stays small whatever the event log holds; the SVG carries the count of points it was
given (`data-points`) and the newest one's x (`data-last`), which the browser tests read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from sluicegate.gateway.console.markup import esc

MAX_POINTS = 400


def _thin(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    if len(points) <= MAX_POINTS:
        return list(points)
    step = len(points) / (MAX_POINTS - 1)
    kept = [points[int(i * step)] for i in range(MAX_POINTS - 1)]
    return [*kept, points[-1]]


def _clock(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%H:%M:%S")


def _figure(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def time_series(chart_id: str, title: str, unit: str, points: Sequence[tuple[float, float]],
                width: int = 640, height: int = 180) -> str:
    """A line chart of (epoch seconds, value) points, oldest first, with its y range and time range labelled."""
    label = f"{title} ({unit})"
    head = (f'<svg id="{esc(chart_id)}" class="chart" role="img" aria-label="{esc(label)}" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg" '
            f'data-points="{len(points)}" data-last="{points[-1][0] if points else ""}">'
            f'<title>{esc(label)}</title>'
            f'<text x="8" y="16" font-size="12" fill="#1d2733">{esc(label)}</text>')
    if not points:
        return head + (f'<text x="{width // 2}" y="{height // 2}" font-size="12" fill="#66717d" '
                       'text-anchor="middle">no micro-batch recorded yet</text></svg>')
    shown = _thin(points)
    left, right, top, bottom = 56, width - 12, 26, height - 22
    x0, x1 = shown[0][0], shown[-1][0]
    y_max = max(*(y for _, y in shown), 1e-9)
    span = (x1 - x0) or 1.0

    def xy(x: float, y: float) -> tuple[float, float]:
        px = left + (x - x0) / span * (right - left) if x1 > x0 else (left + right) / 2
        return px, bottom - y / y_max * (bottom - top)

    coordinates = [xy(x, y) for x, y in shown]
    line = " ".join(f"{px:.1f},{py:.1f}" for px, py in coordinates)
    dots = "".join(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2" fill="#2f6fb2"/>' for px, py in coordinates[-60:])
    axes = (f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#9aa5b1"/>'
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#9aa5b1"/>'
            f'<text x="{left - 4}" y="{top + 4}" font-size="10" text-anchor="end" fill="#66717d">'
            f'{esc(_figure(y_max))}</text>'
            f'<text x="{left - 4}" y="{bottom}" font-size="10" text-anchor="end" fill="#66717d">0</text>'
            f'<text x="{left}" y="{height - 6}" font-size="10" fill="#66717d">{esc(_clock(x0))}</text>'
            f'<text x="{right}" y="{height - 6}" font-size="10" text-anchor="end" fill="#66717d">'
            f'{esc(_clock(x1))} UTC</text>')
    return (head + axes + f'<polyline points="{line}" fill="none" stroke="#2f6fb2" stroke-width="1.5"/>' + dots
            + "</svg>")


@dataclass(frozen=True)
class Node:
    node_id: str
    label: str
    kind: str                 # source, table, streaming table, flow, materialized view


@dataclass(frozen=True)
class Edge:
    source: str
    target: str


KIND_COLOURS = {"source": "#fff4d6", "table": "#eef1f4", "streaming table": "#dcebff", "flow": "#e6f5e6",
                "materialized view": "#f2e4fb"}


def _depths(nodes: Sequence[Node], edges: Sequence[Edge]) -> dict[str, int]:
    """Each node's column: the longest path to it from a node nothing feeds (cycles, which lineage should not
    have, are cut after len(nodes) rounds)."""
    depth = {node.node_id: 0 for node in nodes}
    for _ in range(len(nodes)):
        changed = False
        for edge in edges:
            if edge.source in depth and edge.target in depth and depth[edge.target] < depth[edge.source] + 1:
                depth[edge.target] = depth[edge.source] + 1
                changed = True
        if not changed:
            break
    return depth


def lineage_graph(nodes: Sequence[Node], edges: Sequence[Edge]) -> str:
    """Nodes in columns by depth (sources left, what they feed to the right), edges as arrows."""
    if not nodes:
        return '<p class="muted">no streaming table or materialized view you may read</p>'
    depth = _depths(nodes, edges)
    columns: dict[int, list[Node]] = {}
    for node in nodes:
        columns.setdefault(depth[node.node_id], []).append(node)
    box_w, box_h, gap_x, gap_y, pad = 210, 40, 70, 18, 12
    at: dict[str, tuple[float, float]] = {}
    for column, members in columns.items():
        for row, node in enumerate(members):
            at[node.node_id] = (pad + column * (box_w + gap_x), pad + row * (box_h + gap_y))
    width = pad * 2 + (max(columns) + 1) * (box_w + gap_x) - gap_x
    height = pad * 2 + max(len(m) for m in columns.values()) * (box_h + gap_y) - gap_y
    parts = [f'<svg id="lineage" role="img" aria-label="lineage" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg" data-nodes="{len(nodes)}" '
             f'data-edges="{len(edges)}"><title>lineage</title>'
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#66717d"/></marker></defs>']
    for edge in edges:
        if edge.source not in at or edge.target not in at:
            continue
        (sx, sy), (tx, ty) = at[edge.source], at[edge.target]
        parts.append(f'<line class="edge" x1="{sx + box_w}" y1="{sy + box_h / 2}" x2="{tx}" y2="{ty + box_h / 2}" '
                     f'stroke="#66717d" marker-end="url(#arrow)" data-from="{esc(edge.source)}" '
                     f'data-to="{esc(edge.target)}"/>')
    for node in nodes:
        x, y = at[node.node_id]
        label = node.label if len(node.label) <= 30 else node.label[:14] + "..." + node.label[-13:]
        parts.append(f'<g class="node" data-id="{esc(node.node_id)}" data-kind="{esc(node.kind)}">'
                     f'<title>{esc(node.kind)}: {esc(node.label)}</title>'
                     f'<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="5" '
                     f'fill="{KIND_COLOURS.get(node.kind, "#fff")}" stroke="#9aa5b1"/>'
                     f'<text x="{x + 8}" y="{y + 16}" font-size="12" fill="#1d2733">{esc(label)}</text>'
                     f'<text x="{x + 8}" y="{y + 31}" font-size="10" fill="#66717d">{esc(node.kind)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)
