import type { JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Interval, Point } from '../api.js';
import { localNow, pastOrNull, pointSeconds } from './chart-points.js';
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

/** Fires once per page load when a chart is first drawn (the bench's "first drawn chart"). */
function markDrawn(el: HTMLElement) {
  el.dataset.drawn = 'true';
  if (performance.getEntriesByName('ff-chart-drawn').length === 0) performance.mark('ff-chart-drawn');
}

function useDarkModeKey(): string {
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/**
 * Visitors (line, left axis) and revenue (bars, right axis) per hour, day or
 * month, drawn by uPlot; the legend under it shows the hovered point (and
 * asks for a hover while there is none) and toggles a series on click.
 * Points after the site-local hour, day or month of `now` (ms, default the
 * clock) in `timezone` are not drawn: they have no data yet.
 */
export function TimeChart(props: {
  points: Point[];
  interval: Interval;
  timezone: string;
  now?: number;
  height?: number;
}): JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  const scheme = useDarkModeKey();
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = props.points.map((p) => pointSeconds(p.start));
    const visitors = cssVar('--chart-visitors');
    const revenue = cssVar('--chart-revenue');
    // Half a step of room at each end, so the first and last revenue bars are drawn whole.
    const half = xs.length > 1 ? (xs[xs.length - 1]! - xs[0]!) / (xs.length - 1) / 2 : 1800;
    const axis = {
      stroke: cssVar('--muted'),
      grid: { stroke: cssVar('--grid'), width: 1 },
      ticks: { stroke: cssVar('--grid'), width: 1 },
    };
    const opts: uPlot.Options = {
      width: el.clientWidth || 600,
      height: props.height ?? 260,
      tzDate: utc,
      cursor: { points: { size: 7 }, drag: { x: false, y: false } },
      scales: {
        x: { time: true, range: (_u, min, max) => [min - half, max + half] },
        visitors: { range: (_u, _min, max) => [0, Math.max(4, max * 1.1)] },
        usd: { range: (_u, _min, max) => [0, Math.max(10, max * 1.15)] },
      },
      series: [
        {
          label: 'Point',
          value: (_u, v) => (v === null ? 'hover or tap the chart' : LABEL[props.interval].format(new Date(v * 1000))),
        },
        {
          label: 'Visitors',
          scale: 'visitors',
          stroke: visitors,
          width: 2,
          fill: `${visitors}22`,
          points: { show: props.points.length <= 60 },
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
          values: (_u, vals) => vals.map((v) => AXIS[props.interval].format(new Date(v * 1000))),
        },
        { ...axis, scale: 'visitors', size: 48, values: (_u, vals) => vals.map((v) => formatCompact(v)) },
        {
          ...axis,
          scale: 'usd',
          side: 1,
          size: 56,
          grid: { show: false },
          values: (_u, vals) => vals.map((v) => formatUsdAxis(v)),
        },
      ],
      hooks: { draw: [() => markDrawn(el)] },
    };
    const nowStart = localNow(props.now ?? Date.now(), props.timezone, props.interval);
    const plot = new uPlot(
      opts,
      [
        xs,
        props.points.map((p) => pastOrNull(p.start, p.visitors, nowStart)),
        props.points.map((p) => pastOrNull(p.start, p.revenue_usd, nowStart)),
      ],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: props.height ?? 260 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.points, props.interval, props.timezone, props.now, props.height, scheme]);
  return <div class="chart" ref={box} aria-label="Visitors and revenue over time" role="img" />;
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
        hooks: { draw: [() => markDrawn(el)] },
      },
      [props.values.map((_, i) => i), props.values],
      el,
    );
    return () => plot.destroy();
  }, [props.values]);
  return <div class="sparkline" ref={box} role="img" aria-label={props.label} />;
}
