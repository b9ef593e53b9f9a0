/**
 * Charts with many series: a unit operation with 10 and with 40 instruments of
 * varied units (some without a unit, one a stirrer setpoint logged on change), and Compare with
 * 4 runs x 5 parameters. At 1440 and 390 px the plot keeps its height, the legend never overlaps it,
 * a step series is drawn with horizontal runs, and Compare draws one panel per parameter.
 */
import { expect, test } from './support/quiet-console.ts';
import type { Locator, Page, APIRequestContext } from '@playwright/test';
import { adminSession, call, callJson } from './pages-helpers.ts';
import { signInWithSession, type ApiSession } from './support/auth.ts';
import { createFacilityAndEquipment, createRun, uniqueStamp, type Entity } from './data-fixtures.ts';

test.use({ timezoneId: 'UTC' });

const START_ISO = '2025-03-03T06:00:00.000Z';
const HOURS = 12;
/** Below this the plot of a many-series chart is unreadable (the issue saw 80-90 px). */
const MIN_PLOT_HEIGHT_PX = 250;
const MIN_PANEL_PLOT_HEIGHT_PX = 150;

const KINDS = [
  { type: 'temperature', unit: 'celsius', base: 37, swing: 2 },
  { type: 'pH', unit: 'pH', base: 7, swing: 0.2 },
  { type: 'dissolved_o2', unit: '%', base: 60, swing: 30 },
  { type: 'feed_rate', unit: 'mL/min', base: 0.5, swing: 0.4 },
  { type: 'optical_density', unit: 'OD600', base: 20, swing: 18 },
  { type: 'vessel_pressure', unit: 'bar', base: 0.3, swing: 0.1 },
  { type: 'conductivity', unit: 'mS/cm', base: 12, swing: 3 },
  { type: 'titer', unit: 'g/L', base: 2, swing: 1.5 },
  { type: 'temperature', unit: null, base: 0.5, swing: 0.5 },
  { type: 'exhaust_co2', unit: null, base: 40_000, swing: 35_000 },
] as const;

interface ManySeries { run: Entity; unitOperationId: number; stepName: string }

/** A unit operation on its own reactor with `count` instruments, the first a stirrer setpoint that steps twice. */
async function createManySeries(request: APIRequestContext, session: ApiSession, stamp: string, count: number): Promise<ManySeries> {
  const { facility, equipment } = await createFacilityAndEquipment(request, session, stamp, `Many-${count} ${stamp}`);
  const startMs = Date.parse(START_ISO);
  const endIso = new Date(startMs + HOURS * 3_600_000).toISOString();
  const run = await createRun(request, session, facility.id, `Many series ${count} ${stamp}`, START_ISO, endIso);
  const operation = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/unit-operations', {
    run_id: run.id, type: 'fermentation', equipment_id: equipment.id, start_time: START_ISO, end_time: endIso,
  });
  const stepName = `SIC-000 Stirrer setpoint ${stamp}`;
  const stirrer = await callJson<{ id: number; draw_as_steps: boolean }>(request, session.token, 'POST', '/api/v1/instruments', {
    name: stepName, type: 'stir_rate', unit: 'rpm', equipment_id: equipment.id,
  });
  expect(stirrer.draw_as_steps).toBe(true);
  const points: Array<{ measured_at: string; instrument_id: number; float_value: number }> = [];
  // Logged on change: three values over twelve hours.
  for (const [hour, rpm] of [[0, 300], [4, 600], [8, 900], [HOURS, 900]] as const) {
    points.push({ measured_at: new Date(startMs + hour * 3_600_000).toISOString(), instrument_id: stirrer.id, float_value: rpm });
  }
  for (let index = 1; index < count; index += 1) {
    const kind = KINDS[index % KINDS.length]!;
    const created = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', {
      name: `TAG-${String(index).padStart(3, '0')} ${kind.type}`, type: kind.type, unit: kind.unit, equipment_id: equipment.id,
    });
    for (let minute = 0; minute <= HOURS * 60; minute += 15) {
      const value = kind.base + kind.swing * Math.sin((minute / 60 + index) / 2);
      points.push({ measured_at: new Date(startMs + minute * 60_000).toISOString(), instrument_id: created.id, float_value: value });
    }
  }
  const bulk = await call(request, session.token, 'POST', '/api/v1/time-series-data/bulk?wait=true', { data: points });
  expect(bulk.status(), await bulk.text()).toBeLessThan(300);
  return { run, unitOperationId: operation.id, stepName };
}

async function box(locator: Locator) {
  const found = await locator.boundingBox();
  expect(found).not.toBeNull();
  return found!;
}

/** The plot stays tall and the legend (beside or under it) never covers it. */
async function expectReadableChart(chart: Locator, minPlotHeight: number): Promise<void> {
  const plot = await box(chart.locator('.highcharts-plot-background').first());
  expect(plot.height).toBeGreaterThanOrEqual(minPlotHeight);
  const legend = await box(chart.getByTestId('chart-legend'));
  const overlaps = legend.x < plot.x + plot.width && plot.x < legend.x + legend.width && legend.y < plot.y + plot.height && plot.y < legend.y + legend.height;
  expect(overlaps).toBe(false);
}

/** Horizontal segments of a series' drawn path: a step line holds each value until the next. */
async function horizontalSegments(page: Page, chart: Locator, seriesIndex: number): Promise<number> {
  const d = await chart.locator(`.highcharts-series-${seriesIndex} path.highcharts-graph`).first().getAttribute('d');
  const coordinates = [...(d ?? '').matchAll(/[ML]\s*(-?[\d.]+)[ ,](-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
  let count = 0;
  for (let i = 1; i < coordinates.length; i += 1) {
    const [x0, y0] = coordinates[i - 1]!;
    const [x1, y1] = coordinates[i]!;
    if (Math.abs(y1 - y0) < 0.01 && x1 - x0 > 20) count += 1;
  }
  void page;
  return count;
}

for (const count of [10, 40]) {
  test(`a unit operation with ${count} series reads at 1440 and 390 px`, async ({ page, request }, testInfo) => {
    test.setTimeout(300_000);
    const session = await adminSession(request);
    const fixture = await createManySeries(request, session, uniqueStamp(), count);
    await page.setViewportSize({ width: 1440, height: 1000 });
    await signInWithSession(page, session, `/runs/${fixture.run.id}/unit-operations/${fixture.unitOperationId}`);
    await page.getByTestId('parameter-list').getByText('All parameters').click();
    const chart = page.getByTestId('process-parameters-chart');
    await expect(chart.getByTestId('chart-legend').getByRole('listitem')).toHaveCount(count);
    // Every series read (two at a time) and drawn before anything is measured.
    await expect(chart.locator('.highcharts-series path.highcharts-graph')).toHaveCount(count);
    // Beside the chart column of a 1440 px screen, the legend would leave the plot a third of the frame.
    await expect(chart.getByTestId('chart-legend')).toHaveAttribute('data-placement', 'below');
    await expectReadableChart(chart, MIN_PLOT_HEIGHT_PX);
    const frameWidth = (await box(chart)).width;
    expect((await box(chart.locator('.highcharts-plot-background').first())).width).toBeGreaterThanOrEqual(frameWidth * 0.6);
    // The setpoint is drawn as steps: horizontal runs between its changes, not diagonals.
    expect(await horizontalSegments(page, chart, 0)).toBeGreaterThanOrEqual(2);
    await page.screenshot({ path: testInfo.outputPath(`uo-${count}-series-1440.png`), fullPage: true });

    // One panel per unit grows the page; no panel is squeezed.
    await chart.getByText('Panel per unit').click();
    await expect(chart).toHaveAttribute('data-layout', 'stacked');
    const panelHeights = await chart.locator('.highcharts-yaxis-grid').evaluateAll((grids) => grids.map((grid) => grid.getBoundingClientRect().height));
    for (const height of panelHeights) expect(height).toBeGreaterThanOrEqual(MIN_PANEL_PLOT_HEIGHT_PX - 30);
    await chart.getByText('One plot').click();

    // A wide screen has room for the legend beside the plot.
    await page.setViewportSize({ width: 1920, height: 1000 });
    await expect(chart.getByTestId('chart-legend')).toHaveAttribute('data-placement', 'side');
    await expectReadableChart(chart, MIN_PLOT_HEIGHT_PX);

    await page.setViewportSize({ width: 390, height: 844 });
    await expect(chart.getByTestId('chart-legend')).toHaveAttribute('data-placement', 'below');
    await expectReadableChart(chart, MIN_PLOT_HEIGHT_PX);
    // A narrow plot gets fewer time ticks, not labels turned on their side.
    const rotated = await chart.locator('.highcharts-xaxis-labels text').evaluateAll((labels) => labels.filter((label) => (label.getAttribute('transform') ?? '').includes('rotate')).length);
    expect(rotated).toBe(0);
    const legendHeight = (await box(chart.getByTestId('chart-legend'))).height;
    expect(legendHeight).toBeLessThanOrEqual(170);
    await page.screenshot({ path: testInfo.outputPath(`uo-${count}-series-390.png`), fullPage: true });
  });
}

test('Compare of 4 runs x 5 parameters draws one panel per parameter', async ({ page, request }, testInfo) => {
  test.setTimeout(300_000);
  const session = await adminSession(request);
  const stamp = uniqueStamp();
  const runs: string[] = [];
  for (let index = 0; index < 4; index += 1) {
    const { facility, equipment } = await createFacilityAndEquipment(request, session, `${stamp}${index}`, `Cmp-${index} ${stamp}`);
    const startMs = Date.parse(START_ISO) + index * 86_400_000;
    const run = await createRun(request, session, facility.id, `Compare ${index + 1} ${stamp}`, new Date(startMs).toISOString(), new Date(startMs + HOURS * 3_600_000).toISOString());
    runs.push(run.name);
    const operation = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/unit-operations', {
      run_id: run.id, type: 'fermentation', equipment_id: equipment.id, start_time: new Date(startMs).toISOString(), end_time: new Date(startMs + HOURS * 3_600_000).toISOString(),
    });
    const points: Array<{ measured_at: string; instrument_id: number; float_value: number }> = [];
    for (const kind of KINDS.slice(0, 5)) {
      const created = await callJson<{ id: number }>(request, session.token, 'POST', '/api/v1/instruments', {
        name: `${kind.type} ${index}`, type: kind.type, unit: kind.unit, equipment_id: equipment.id,
      });
      for (let minute = 0; minute <= HOURS * 60; minute += 15) {
        points.push({ measured_at: new Date(startMs + minute * 60_000).toISOString(), instrument_id: created.id, float_value: kind.base + kind.swing * Math.sin(minute / 90 + index) });
      }
    }
    const bulk = await call(request, session.token, 'POST', '/api/v1/time-series-data/bulk?wait=true', { data: points });
    expect(bulk.status(), await bulk.text()).toBeLessThan(300);
    for (const hour of [2, 2.2, 2.4]) {
      await callJson(request, session.token, 'POST', '/api/v1/comments', {
        timestamp: new Date(startMs + hour * 3_600_000).toISOString(), unit_operations_id: operation.id, content: `Run ${index + 1} note at ${hour} h`,
      });
    }
  }
  await page.setViewportSize({ width: 1440, height: 1000 });
  await signInWithSession(page, session, '/runs/compare');
  await page.getByPlaceholder('Search runs by name, ID, strain, description...').fill(stamp);
  for (const name of runs) await page.getByRole('checkbox', { name: new RegExp(name) }).check({ force: true });
  const chooser = page.getByTestId('compare-parameters');
  for (const label of ['temperature [celsius]', 'pH [pH]', 'dissolved_o2 [%]', 'feed_rate [mL/min]', 'optical_density [OD600]']) {
    const box = chooser.getByRole('checkbox', { name: label });
    if (!(await box.isChecked())) await box.check({ force: true });
  }
  const multiples = page.getByTestId('compare-small-multiples');
  await expect(multiples.locator('[data-testid^="compare-panel-"]')).toHaveCount(5);
  for (let index = 0; index < 5; index += 1) {
    const panel = multiples.getByTestId(`compare-panel-${index}`);
    const plot = await box(panel.locator('.highcharts-plot-background'));
    expect(plot.height).toBeGreaterThanOrEqual(MIN_PANEL_PLOT_HEIGHT_PX);
    await expect(panel.locator('.highcharts-series path.highcharts-graph')).toHaveCount(4);
  }
  // Comment lines in every panel; labels only in the first, and never on top of each other there.
  const first = multiples.getByTestId('compare-panel-0');
  const labels = await first.locator('.bp-chart-comment-label').evaluateAll((nodes) => nodes
    .filter((node) => (node.textContent ?? '').trim() !== '').map((node) => node.getBoundingClientRect()).map((r) => ({ x: r.x, y: r.y, w: r.width, h: r.height })));
  for (let i = 0; i < labels.length; i += 1) {
    for (let j = i + 1; j < labels.length; j += 1) {
      const a = labels[i]!; const b = labels[j]!;
      expect(a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h).toBe(false);
    }
  }
  await page.screenshot({ path: testInfo.outputPath('compare-4x5-1440.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(multiples.locator('[data-testid^="compare-panel-"]')).toHaveCount(5);
  await page.screenshot({ path: testInfo.outputPath('compare-4x5-390.png'), fullPage: true });
});
