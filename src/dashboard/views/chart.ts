/** The overview's throughput chart: one stacked bar a minute (succeeded below, failed above), drawn as SVG on the server. */
import { html } from 'hono/html';
import { formatTime } from '../../reports/format.js';
import type { ThroughputMinute } from '../data.js';
import type { Html } from './layout.js';

const WIDTH = 720;
const HEIGHT = 150;
const LEFT = 36;
const BOTTOM = 18;
const TOP = 6;

export function throughputChart(minutes: readonly ThroughputMinute[]): Html {
  const succeeded = minutes.reduce((n, m) => n + m.SUCCEEDED, 0);
  const failed = minutes.reduce((n, m) => n + m.FAILED, 0);
  const legend = html`<p class="legend"><span class="key ok"></span> ${succeeded} succeeded <span class="key failed"></span> ${failed} failed <small class="muted">in the last hour, per minute</small></p>`;
  if (minutes.length === 0 || succeeded + failed === 0)
    return html`${legend}<p class="muted empty">No job finished in the last hour.</p>`;

  const peak = Math.max(1, ...minutes.map((m) => m.SUCCEEDED + m.FAILED));
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = (WIDTH - LEFT) / minutes.length;
  const barWidth = Math.max(1, slot - 2);
  const y = (count: number) => (count / peak) * plotHeight;
  const bars = minutes.map((m, i) => {
    const x = (LEFT + i * slot + 1).toFixed(1);
    const ok = y(m.SUCCEEDED);
    const bad = y(m.FAILED);
    const base = HEIGHT - BOTTOM;
    return html`<g><title>${formatTime(m.minute).slice(11, 16)}Z: ${m.SUCCEEDED} succeeded, ${m.FAILED} failed</title><rect class="bar-hit" x="${x}" y="${TOP}" width="${barWidth.toFixed(1)}" height="${plotHeight}"></rect>${ok > 0 ? html`<rect class="bar-ok" x="${x}" y="${(base - ok).toFixed(1)}" width="${barWidth.toFixed(1)}" height="${ok.toFixed(1)}"></rect>` : ''}${bad > 0 ? html`<rect class="bar-failed" x="${x}" y="${(base - ok - bad).toFixed(1)}" width="${barWidth.toFixed(1)}" height="${bad.toFixed(1)}"></rect>` : ''}</g>`;
  });
  const first = minutes[0]!.minute;
  const last = minutes[minutes.length - 1]!.minute;
  return html`${legend}<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="jobs finished per minute, last hour">
<line class="axis" x1="${LEFT}" y1="${HEIGHT - BOTTOM}" x2="${WIDTH}" y2="${HEIGHT - BOTTOM}"></line>
<line class="grid" x1="${LEFT}" y1="${TOP}" x2="${WIDTH}" y2="${TOP}"></line>
<text class="tick" x="${LEFT - 4}" y="${TOP + 9}" text-anchor="end">${peak}</text>
<text class="tick" x="${LEFT - 4}" y="${HEIGHT - BOTTOM}" text-anchor="end">0</text>
<text class="tick" x="${LEFT}" y="${HEIGHT - 4}">${formatTime(first).slice(11, 16)}Z</text>
<text class="tick" x="${(LEFT + WIDTH) / 2}" y="${HEIGHT - 4}" text-anchor="middle">${formatTime(minutes[Math.floor(minutes.length / 2)]!.minute).slice(11, 16)}Z</text>
<text class="tick" x="${WIDTH}" y="${HEIGHT - 4}" text-anchor="end">${formatTime(last).slice(11, 16)}Z</text>
${bars}
</svg>`;
}
