// A live line chart over a sliding window of samples, drawn with uPlot. Pages push one sample per
// poll; the chart follows its container's width.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom.ts';

/** Samples kept on a chart: two minutes at one poll a second. */
export const CHART_WINDOW_POINTS = 120;
const CHART_HEIGHT_PX = 220;
/** The y axis starts at zero and leaves this much headroom above the highest value. */
const Y_HEADROOM = 1.15;
/** Time ticks fall on whole seconds: samples come once a second. */
const TIME_TICK_STEPS_S = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600];
const TIME_TICK_SPACE_PX = 70;

const clock = (seconds: number) => new Date(seconds * 1000).toLocaleTimeString('en-GB', { hour12: false });

export interface SeriesSpec {
  label: string;
  color: string;
}

export class LiveChart {
  readonly element: HTMLElement;
  private readonly options: uPlot.Options;
  private readonly data: number[][];
  private plot: uPlot | null = null;
  private readonly resize = new ResizeObserver(() => this.fit());

  constructor(series: SeriesSpec[], options: { testid: string; y_label: string; format?: (n: number) => string }) {
    this.element = h('div', { class: 'chart', testid: options.testid });
    this.data = [[], ...series.map(() => [])];
    this.options = {
      width: 600,
      height: CHART_HEIGHT_PX,
      scales: { y: { range: (_u, min, max) => [0, Math.max(1, max * Y_HEADROOM, min)] } },
      axes: [
        {
          stroke: '#667085',
          grid: { stroke: '#eef0f3' },
          incrs: TIME_TICK_STEPS_S,
          space: TIME_TICK_SPACE_PX,
          values: (_u, ticks) => ticks.map(clock),
        },
        {
          stroke: '#667085',
          grid: { stroke: '#eef0f3' },
          label: options.y_label,
          size: 64,
          values: (_u, ticks) => ticks.map((t) => (options.format ?? String)(t)),
        },
      ],
      series: [
        { label: 'time', value: (_u, v) => (v === null ? '–' : clock(v)) },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          fill: `${s.color}1a`,
          points: { show: false },
        })),
      ],
      legend: { live: true },
    };
  }

  /** Adds a sample taken at `time_ms`; the oldest drops off once the window is full. */
  push(time_ms: number, values: number[]): void {
    this.data[0]!.push(time_ms / 1000);
    values.forEach((v, i) => this.data[i + 1]!.push(v));
    if (this.data[0]!.length > CHART_WINDOW_POINTS) for (const column of this.data) column.shift();
    if (!this.plot) {
      // Created on the first sample, once the element is in the document and has a width.
      this.plot = new uPlot({ ...this.options, width: this.width() }, this.data as uPlot.AlignedData, this.element);
      this.resize.observe(this.element);
    } else {
      this.plot.setData(this.data as uPlot.AlignedData);
    }
  }

  private width(): number {
    return Math.max(200, this.element.clientWidth || 600);
  }

  private fit(): void {
    if (this.plot && Math.abs(this.plot.width - this.width()) > 1)
      this.plot.setSize({ width: this.width(), height: CHART_HEIGHT_PX });
  }

  destroy(): void {
    this.resize.disconnect();
    this.plot?.destroy();
    this.plot = null;
  }
}
