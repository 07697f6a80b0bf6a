import { useEffect, useRef, useState } from "preact/hooks";
import type uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { dateNames, formatNumber, steadyNavigatorLanguage } from "../locale.ts";
import { Boundary } from "./boundary.tsx";

export interface ChartSeries {
  label: string;
  /** A CSS custom property of the theme, e.g. `--c-delivered`. */
  colorVar: string;
  values: number[];
}

const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#888";

type UPlot = typeof uPlot;
let library: Promise<UPlot> | undefined;

/**
 * uPlot, loaded on first use, after the page's locale was made one it can load with (see
 * `steadyNavigatorLanguage`); should it fail to load all the same, only the charts say so.
 */
function loadChartLibrary(): Promise<UPlot> {
  steadyNavigatorLanguage();
  library ??= import("uplot").then((m) => m.default);
  return library;
}

/** The chart, or a short line where it failed; the page around it keeps working. */
export function Chart(props: ChartProps) {
  return (
    <Boundary what="chart">
      <UPlotChart {...props} />
    </Boundary>
  );
}

interface ChartProps {
  times: number[];
  series: ChartSeries[];
  height?: number;
  label: string;
}

/**
 * A time-series chart drawn by uPlot. Colours come from the page's CSS variables, so it follows
 * the light or dark theme; it is rebuilt when the theme or the series change and resized with
 * its box.
 */
function UPlotChart({ times, series, height = 260, label }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [uPlot, setUPlot] = useState<UPlot | null>(null);
  const [failed, setFailed] = useState<unknown>(null);
  const shape = series.map((s) => s.label).join("|");

  useEffect(() => {
    loadChartLibrary().then((lib) => setUPlot(() => lib), setFailed);
  }, []);

  useEffect(() => {
    if (!uPlot) return;
    const el = box.current!;
    const names = dateNames();
    const build = () => {
      plot.current?.destroy();
      const axis = { stroke: cssVar("--muted"), grid: { stroke: cssVar("--grid"), width: 1 }, ticks: { stroke: cssVar("--grid"), width: 1 } };
      plot.current = new uPlot(
        {
          width: Math.max(240, el.clientWidth),
          height,
          // Its own formatters would use the browser's language as it is; these use the console's locale.
          fmtDate: (template: string) => uPlot.fmtDate(template, names),
          cursor: { drag: { x: false, y: false } },
          // The page shows its own legend with totals; hovering still moves the cursor.
          legend: { show: false },
          scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
          axes: [axis, { ...axis, size: 48, values: (_u: uPlot, splits: number[]) => splits.map(formatNumber) }],
          series: [
            {},
            ...series.map((s) => ({
              label: s.label,
              stroke: cssVar(s.colorVar),
              fill: cssVar(s.colorVar) + "1f",
              width: 2,
              points: { show: false },
            })),
          ],
        },
        [times.map((t) => t / 1000), ...series.map((s) => s.values)],
        // Drawn now rather than in uPlot's own later microtask, so that a failure to draw is thrown
        // here, inside the effect, where the chart's boundary catches it.
        (self, init) => {
          el.appendChild(self.root);
          self.batch(init);
        },
      );
    };
    build();
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(240, el.clientWidth), height }));
    resize.observe(el);
    const scheme = matchMedia("(prefers-color-scheme: dark)");
    scheme.addEventListener("change", build);
    return () => {
      resize.disconnect();
      scheme.removeEventListener("change", build);
      plot.current?.destroy();
      plot.current = null;
    };
  }, [uPlot, shape, height]);

  useEffect(() => {
    const current = plot.current;
    current?.batch(() => current.setData([times.map((t) => t / 1000), ...series.map((s) => s.values)]));
  }, [times, series]);

  // Thrown while rendering, so the boundary around the chart shows it.
  if (failed) throw failed;
  return <div class="chart" ref={box} role="img" aria-label={label} />;
}
