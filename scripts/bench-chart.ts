// The fleet curve as an SVG chart (no dependencies): `up` from empty and the no-op preview in
// seconds, and state per agent, against the number of agents (log scale), for agent-iac (solid)
// and the engine's control (dashed) on each backend. A point measured on a busy machine is hollow.
import type { CurvePoint, FleetResult, Measures } from "./bench-fleet.ts";

const WIDTH = 300;
const HEIGHT = 220;
const PAD = { left: 48, right: 12, top: 28, bottom: 36 };
const COLORS: Record<string, string> = { file: "#1f6feb", postgres: "#d1242f" };

type Panel = { title: string; unit: string; value(m: Measures): number; log: boolean };

const PANELS: Panel[] = [
  { title: "`up` from empty", unit: "s", value: (m) => m.upS, log: true },
  { title: "no-op preview", unit: "s", value: (m) => m.noopPreviewS, log: true },
  { title: "state per agent", unit: "KB", value: (m) => m.stateBytesPerAgent / 1024, log: false },
];

function niceTicks(min: number, max: number, log: boolean): number[] {
  if (log) {
    const ticks: number[] = [];
    for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) ticks.push(10 ** e);
    return ticks;
  }
  const step = 10 ** Math.floor(Math.log10(max || 1));
  const ticks: number[] = [];
  for (let t = 0; t <= max + step / 2; t += step / (max / step < 3 ? 2 : 1)) ticks.push(Number(t.toFixed(3)));
  return ticks;
}

function panel(p: Panel, points: CurvePoint[], x0: number): string {
  const agents = [...new Set(points.map((q) => q.agents))].sort((a, b) => a - b);
  const values = points.flatMap((q) => [p.value(q.ours), p.value(q.control)]).filter((v) => v > 0);
  const ticks = niceTicks(Math.min(...values), Math.max(...values), p.log);
  const [lo, hi] = p.log ? [ticks[0] ?? 1, ticks.at(-1) ?? 10] : [0, ticks.at(-1) ?? 1];
  const f = (v: number) => (p.log ? Math.log10(v) : v);
  const xs = agents.map((a) => Math.log10(a));
  const [xlo, xhi] = [Math.min(...xs), Math.max(...xs) === Math.min(...xs) ? Math.min(...xs) + 1 : Math.max(...xs)];
  const px = (a: number) => x0 + PAD.left + ((Math.log10(a) - xlo) / (xhi - xlo)) * (WIDTH - PAD.left - PAD.right);
  const py = (v: number) => PAD.top + (1 - (f(v) - f(lo)) / (f(hi) - f(lo))) * (HEIGHT - PAD.top - PAD.bottom);
  const parts = [
    `<text x="${x0 + WIDTH / 2}" y="16" text-anchor="middle" font-weight="bold">${p.title.replaceAll("`", "")} (${p.unit})</text>`,
  ];
  for (const t of ticks) {
    parts.push(
      `<line x1="${x0 + PAD.left}" x2="${x0 + WIDTH - PAD.right}" y1="${py(t)}" y2="${py(t)}" stroke="#ddd"/>`,
      `<text x="${x0 + PAD.left - 4}" y="${py(t) + 4}" text-anchor="end">${t}</text>`,
    );
  }
  for (const a of agents)
    parts.push(
      `<text x="${px(a)}" y="${HEIGHT - PAD.bottom + 16}" text-anchor="middle">${a.toLocaleString("en-US")}</text>`,
    );
  parts.push(`<text x="${x0 + WIDTH / 2}" y="${HEIGHT - 6}" text-anchor="middle">agents</text>`);
  for (const backend of [...new Set(points.map((q) => q.backend))]) {
    const series = points.filter((q) => q.backend === backend).sort((a, b) => a.agents - b.agents);
    for (const side of ["ours", "control"] as const) {
      const path = series.map((q) => `${px(q.agents).toFixed(1)},${py(p.value(q[side])).toFixed(1)}`).join(" ");
      const dash = side === "control" ? ' stroke-dasharray="5 4"' : "";
      parts.push(
        `<polyline points="${path}" fill="none" stroke="${COLORS[backend] ?? "#555"}" stroke-width="2"${dash}/>`,
      );
      for (const q of series)
        parts.push(
          `<circle cx="${px(q.agents)}" cy="${py(p.value(q[side]))}" r="2.5" fill="${q.load?.quiet === false ? "#fff" : COLORS[backend]}" stroke="${COLORS[backend]}"/>`,
        );
    }
  }
  return parts.join("\n");
}

export function fleetChart(result: FleetResult, caption: string): string {
  const width = WIDTH * PANELS.length;
  const legendY = HEIGHT + 14;
  const backends = [...new Set(result.points.map((q) => q.backend))];
  const legend = backends.flatMap((backend, i) =>
    (["ours", "control"] as const).map((side, j) => {
      const x = 20 + (i * 2 + j) * 190;
      const dash = side === "control" ? ' stroke-dasharray="5 4"' : "";
      const label = `${side === "ours" ? "agent-iac" : "engine's control"}, ${backend}`;
      return `<line x1="${x}" x2="${x + 28}" y1="${legendY}" y2="${legendY}" stroke="${COLORS[backend]}" stroke-width="2"${dash}/><text x="${x + 34}" y="${legendY + 4}">${label}</text>`;
    }),
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${HEIGHT + 44}" viewBox="0 0 ${width} ${HEIGHT + 44}" font-family="sans-serif" font-size="11" role="img" aria-labelledby="chart-title">`,
    `<title id="chart-title">agent-iac beside the engine's control: up from empty, no-op preview and state per agent, by fleet size and backend</title>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    ...PANELS.map((p, i) => panel(p, result.points, i * WIDTH)),
    ...legend,
    `<text x="${width - 8}" y="${HEIGHT + 36}" text-anchor="end" fill="#666">${caption}${result.points.some((q) => q.load?.quiet === false) ? "; hollow points: busy machine" : ""}</text>`,
    "</svg>",
    "",
  ].join("\n");
}
