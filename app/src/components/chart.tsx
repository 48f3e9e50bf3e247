import type { JSX } from 'preact';
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Interval, Point } from '../api.js';
import { chartLabel, localNow, pastOrNull, pointSeconds } from './chart-points.js';
import { formatCompact, formatCount, formatUsd, formatUsdAxis } from '../format.js';

const utc = (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

const LABEL: Record<Interval, Intl.DateTimeFormat> = {
  hour: new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' }),
  day: new Intl.DateTimeFormat('en-GB', {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    timeZone: 'UTC',
  }),
  month: new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' }),
};

/** Tick labels of the time axis, in the page's day-month order ("28 Oct", "14:00", "Oct 2026"). */
const AXIS: Record<Interval, Intl.DateTimeFormat> = {
  hour: new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' }),
  day: new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' }),
  month: new Intl.DateTimeFormat('en-GB', { month: 'short', year: 'numeric', timeZone: 'UTC' }),
};

/**
 * Marks a chart drawn (`data-drawn`), and fires `ff-chart-drawn` once per page load when a chart is first drawn
 * with its data (the bench's "first drawn chart"); the empty frame drawn while the data is on its way does not count.
 */
function markDrawn(el: HTMLElement, points: number) {
  if (points === 0) return;
  el.dataset.drawn = 'true';
  if (performance.getEntriesByName('ff-chart-drawn').length === 0) performance.mark('ff-chart-drawn');
}

function useDarkModeKey(): string {
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/** What the plot's formatters read of the series shown: it changes with the data, without a new plot. */
interface Shown {
  interval: Interval;
  count: number;
}

/** uPlot's options for the time chart; `shown` is read at each draw. */
function chartOptions(el: HTMLElement, height: number, shown: { current: Shown }): uPlot.Options {
  const visitors = cssVar('--chart-visitors');
  const revenue = cssVar('--chart-revenue');
  const axis = {
    stroke: cssVar('--muted'),
    grid: { stroke: cssVar('--grid'), width: 1 },
    ticks: { stroke: cssVar('--grid'), width: 1 },
  };
  // No tick labels on the empty frame drawn before the data (its scale is a placeholder).
  const ticks = (format: (v: number) => string) => (u: uPlot, vals: number[]) =>
    u.data[0].length === 0 ? vals.map(() => '') : vals.map(format);
  return {
    width: el.clientWidth || 600,
    height,
    tzDate: utc,
    cursor: { points: { size: 7 }, drag: { x: false, y: false } },
    scales: {
      x: {
        time: true,
        // Half a step of room at each end, so the first and last revenue bars are drawn whole.
        range: (u, min, max) => {
          const xs = u.data[0];
          if (xs.length === 0 || min === null || max === null) return [0, 3600];
          const half = xs.length > 1 ? (xs[xs.length - 1]! - xs[0]!) / (xs.length - 1) / 2 : 1800;
          return [min - half, max + half];
        },
      },
      visitors: { range: (_u, _min, max) => [0, Math.max(4, (max ?? 0) * 1.1)] },
      usd: { range: (_u, _min, max) => [0, Math.max(10, (max ?? 0) * 1.15)] },
    },
    series: [
      {
        label: 'Point',
        value: (_u, v) =>
          v === null ? 'hover or tap the chart' : LABEL[shown.current.interval].format(new Date(v * 1000)),
      },
      {
        label: 'Visitors',
        scale: 'visitors',
        stroke: visitors,
        width: 2,
        fill: `${visitors}22`,
        points: { show: () => shown.current.count <= 60 },
        value: (_u, v) => (v === null ? '' : formatCount(v)),
      },
      {
        label: 'Revenue',
        scale: 'usd',
        stroke: revenue,
        fill: `${revenue}aa`,
        width: 0,
        paths: uPlot.paths.bars!({ size: [0.6, 28], align: 0 }),
        points: { show: false },
        value: (_u, v) => (v === null ? '' : formatUsd(v)),
      },
    ],
    axes: [
      {
        ...axis,
        space: 60,
        values: ticks((v) => AXIS[shown.current.interval].format(new Date(v * 1000))),
      },
      { ...axis, scale: 'visitors', size: 48, values: ticks((v) => formatCompact(v)) },
      {
        ...axis,
        scale: 'usd',
        side: 1,
        size: 56,
        grid: { show: false },
        values: ticks((v) => formatUsdAxis(v)),
      },
    ],
    hooks: { draw: [(u) => markDrawn(el, u.data[0].length)] },
  };
}

/**
 * Visitors (line, left axis) and revenue (bars, right axis) per hour, day or
 * month, drawn by uPlot; the legend under it shows the hovered point (and
 * asks for a hover while there is none) and toggles a series on click.
 * Points after the site-local hour, day or month of `now` (ms, default the
 * clock) in `timezone` are not drawn: they have no data yet.
 *
 * The plot (its canvas, axes and legend) is made when the chart mounts, with
 * `points` undefined while the series is on its way, and the data is set
 * into it when it arrives, before the browser paints: the page's first
 * chart is drawn as soon as its data is in, not after the plot is built.
 */
export function TimeChart(props: {
  points: Point[] | undefined;
  interval: Interval;
  timezone: string | undefined;
  now?: number;
  height?: number;
}): JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shown = useRef<Shown>({ interval: props.interval, count: 0 });
  const scheme = useDarkModeKey();
  const height = props.height ?? 260;
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const made = new uPlot(chartOptions(el, height, shown), [[], [], []], el);
    plot.current = made;
    // The observer's first call comes at the size the plot was made at; uPlot would redraw even so.
    const resize = new ResizeObserver(() => {
      if (el.clientWidth !== made.width) made.setSize({ width: el.clientWidth, height });
    });
    resize.observe(el);
    return () => {
      resize.disconnect();
      made.destroy();
      plot.current = null;
    };
  }, [height, scheme]);
  useLayoutEffect(() => {
    const made = plot.current;
    const { points, timezone } = props;
    if (!made || !points || !timezone) return;
    shown.current = { interval: props.interval, count: points.length };
    const nowStart = localNow(props.now ?? Date.now(), timezone, props.interval);
    made.setData([
      points.map((p) => pointSeconds(p.start)),
      points.map((p) => pastOrNull(p.start, p.visitors, nowStart)),
      points.map((p) => pastOrNull(p.start, p.revenue_usd, nowStart)),
    ]);
  }, [props.points, props.interval, props.timezone, props.now, height, scheme]);
  return <div class="chart" ref={box} aria-label={chartLabel(props.points, props.interval)} role="img" />;
}

/** A small trend line of visitors (sites list): no axes, no cursor. */
export function Sparkline(props: { values: number[]; label: string }): JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const stroke = cssVar('--chart-visitors');
    const plot = new uPlot(
      {
        width: 140,
        height: 36,
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [{ show: false }, { show: false }],
        series: [{}, { stroke, width: 1.5, fill: `${stroke}22`, points: { show: false } }],
        hooks: { draw: [(u) => markDrawn(el, u.data[0].length)] },
      },
      [props.values.map((_, i) => i), props.values],
      el,
    );
    return () => plot.destroy();
  }, [props.values]);
  return <div class="sparkline" ref={box} role="img" aria-label={props.label} />;
}
