import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface ChartSeries {
  label: string;
  /** A CSS custom property of the theme, e.g. `--c-delivered`. */
  colorVar: string;
  values: number[];
}

const cssVar = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#888";

/**
 * A time-series chart drawn by uPlot. Colours come from the page's CSS variables, so it follows
 * the light or dark theme; it is rebuilt when the theme or the series change and resized with
 * its box.
 */
export function Chart({ times, series, height = 260, label }: { times: number[]; series: ChartSeries[]; height?: number; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = series.map((s) => s.label).join("|");

  useEffect(() => {
    const el = box.current!;
    const build = () => {
      plot.current?.destroy();
      const axis = { stroke: cssVar("--muted"), grid: { stroke: cssVar("--grid"), width: 1 }, ticks: { stroke: cssVar("--grid"), width: 1 } };
      plot.current = new uPlot(
        {
          width: Math.max(240, el.clientWidth),
          height,
          cursor: { drag: { x: false, y: false } },
          // The page shows its own legend with totals; hovering still moves the cursor.
          legend: { show: false },
          scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
          axes: [axis, { ...axis, size: 48 }],
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
        el,
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
  }, [shape, height]);

  useEffect(() => {
    plot.current?.setData([times.map((t) => t / 1000), ...series.map((s) => s.values)]);
  }, [times, series]);

  return <div class="chart" ref={box} role="img" aria-label={label} />;
}
