// Daily requests as a bar chart with axes, day labels and a value per bar on hover, drawn by
// Chart.js (MIT), which the instance serves itself under /vendor/ (no CDN: the appliance may have
// no network). Without it (not installed) the same figures show as a small table.
/* global Chart */
import { el } from './core.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "2025-11-28" -> "28 Nov", read as a calendar day (no time zone shift). */
function dayLabel(date) {
  const [, m, d] = date.split('-').map(Number);
  return `${d} ${MONTHS[m - 1] ?? ''}`;
}

/** The charts on the page, destroyed before the page draws new ones (Chart.js keeps listeners). */
const drawn = [];

export function clearCharts() {
  for (const c of drawn.splice(0)) c.destroy();
}

/**
 * A figure for `daily` ([{date, requests}]): its caption sums it up (total, busiest day); the
 * chart is drawn by `draw()` once the figure is in the page (Chart.js sizes it to its box).
 */
export function usageChart(title, daily) {
  const total = daily.reduce((n, d) => n + d.requests, 0);
  const fig = el('figure', undefined, 'chart');
  const busiest = daily.reduce((a, b) => (b.requests > (a?.requests ?? -1) ? b : a), null);
  const summary = total
    ? `${total.toLocaleString()} request${total === 1 ? '' : 's'} in ${daily.length} days; busiest ${dayLabel(busiest.date)} (${busiest.requests.toLocaleString()})`
    : `no requests in ${daily.length} days`;
  fig.append(el('figcaption', `${title}: ${summary}`));
  if (total === 0) {
    fig.append(el('p', 'Nothing to chart yet: requests made with keys of this teamspace show here by day.', 'empty'));
    return { fig, draw: () => {} };
  }
  if (typeof Chart === 'undefined') {
    const table = el('table', undefined, 'chart-table');
    for (const d of daily.filter((x) => x.requests > 0)) {
      const tr = el('tr');
      tr.append(el('td', dayLabel(d.date)), el('td', d.requests.toLocaleString()));
      table.append(tr);
    }
    fig.append(table);
    return { fig, draw: () => {} };
  }
  const box = el('div', undefined, 'chart-box');
  const canvas = el('canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `${title}: ${summary}`);
  box.append(canvas);
  fig.append(box);
  const draw = () => {
    drawn.push(
      new Chart(canvas, {
        type: 'bar',
        data: { labels: daily.map((d) => dayLabel(d.date)), datasets: [{ label: 'Requests', data: daily.map((d) => d.requests), backgroundColor: '#1f5fa8' }] },
        options: {
          animation: false,
          responsive: true,
          maintainAspectRatio: false,
          plugins: { legend: { display: false }, tooltip: { callbacks: { title: (items) => daily[items[0].dataIndex].date } } },
          scales: {
            x: { grid: { display: false }, ticks: { maxRotation: 0, autoSkip: true, maxTicksLimit: 10 } },
            y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'requests per day' } },
          },
        },
      }),
    );
  };
  return { fig, draw };
}
