import { describe, expect, it } from 'vitest';
import { chartColor, chartText } from './chart-text.ts';
import { commentPlotLine, legendLabel, tooltipHtml } from './time-series-labels.ts';
import { COMMENT_LINE } from './chart-constants.ts';
import { envelopeChartOptions, type CamelEnvelope } from '../analyze/analyze-model.ts';

const LINK = '<a href="//example.com" id="evil">x</a>';
const IMAGE = '<img src=x onerror=alert(1)>';
const QUOTES = `Tom's "best" & <b>bold</b>`;
const HOSTILE = [LINK, IMAGE, QUOTES];
const HOSTILE_COLORS = ['red" onmouseover="alert(1)', '#fff"><a href="//example.com">x</a>', 'url(//example.com/x.png)', 'red'];

/** What markup a Highcharts string could still carry: a tag opening, or a quote closing an attribute early. */
function expectNoMarkupFrom(markup: string, text: string) {
  expect(markup).not.toContain(text);
  expect(markup).not.toMatch(/<(a|img|script)\b/i);
  expect(markup).toContain(chartText(text));
}

/** Highcharts decodes exactly these entities when it draws: what the reader sees. */
function shown(markup: string): string {
  return markup.replace(/&(lt|gt|quot|#39|amp);/g, (_, name: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' })[name]!);
}

describe('chart text from data', () => {
  it('escapes the characters Highcharts reads as markup, and reads back as typed', () => {
    expect(chartText(LINK)).toBe('&lt;a href=&quot;//example.com&quot; id=&quot;evil&quot;&gt;x&lt;/a&gt;');
    for (const text of HOSTILE) expect(shown(chartText(text))).toBe(text);
    expect(chartText(null)).toBe('');
    expect(chartText('Feed pump 2 [mL/min]')).toBe('Feed pump 2 [mL/min]');
  });

  it('keeps hex colours and nothing else', () => {
    expect(chartColor('#2D72D2', '#000')).toBe('#2D72D2');
    expect(chartColor('#f00', '#000')).toBe('#f00');
    for (const color of [...HOSTILE_COLORS, null, undefined, '']) expect(chartColor(color, '#000')).toBe('#000');
  });

  it('builds legend labels, tooltips and comment lines with names as text', () => {
    for (const text of HOSTILE) {
      const legend = legendLabel(text, `temperature [${text}]`);
      expectNoMarkupFrom(legend, text);
      expect(legend).toContain('<span style=');

      const tooltip = tooltipHtml({
        heading: '2 h', clock: '2025-03-03 10:00:00',
        readings: [{ color: '#2D72D2', name: text, value: '30.000', unit: text }],
        comment: { content: text, author: text, color: '#fff"><a href="//example.com" id="evil">x</a>', date: '2025-03-03 10:00', minute: '120' },
      });
      expectNoMarkupFrom(tooltip, text);
      // The stored colour is not a colour: the border takes the comment line's.
      expect(tooltip).toContain(`style="border-color:${COMMENT_LINE.color}"`);
      expect(tooltip).not.toContain('example.com"');

      const line = commentPlotLine({ id: 1, minute: 5, content: text, author: text, color: 'red" onmouseover="x' }, 0, false);
      expect(line.color).toBe(COMMENT_LINE.color);
      expect(line.label?.style?.color).toBe(COMMENT_LINE.color);
      expect(line.label?.text).not.toMatch(/[<>"]/);
    }
  });

  it('builds the Analyze chart with the parameter and run names as text', () => {
    const envelope: CamelEnvelope = {
      parameter: 'derived:7', derivedParameter: { id: 7, name: LINK, version: 1 }, unitOperationType: 'fermentation', gridStepSeconds: 60,
      band: { kind: 'percentiles', lower: 5, upper: 95 }, alignment: { kind: 'start' }, references: [1, 2], leftOut: [],
      tolerance: { value: 0.5, source: 'noise', noise: 0.1 }, warnings: [],
      points: [{ t: 0, median: 30, mean: 30, lower: 29, upper: 31, min: 28, max: 32, count: 2, comparedLower: 29, comparedUpper: 31 }],
    } as unknown as CamelEnvelope;
    for (const text of HOSTILE) {
      const options = envelopeChartOptions(envelope, `${text} (derived)`, [{ name: text, color: '#f00', series: [[0, 30]] }], true, 'envelope.svg');
      const title = String((options.title as { text: string }).text);
      const axisTitle = String((options.yAxis as { title: { text: string } }).title.text);
      expectNoMarkupFrom(title, text);
      expectNoMarkupFrom(axisTitle, text);
      const names = (options.series ?? []).map((series) => String(series.name));
      expect(names.at(-1)).toBe(chartText(text));
      for (const name of names) expect(name).not.toMatch(/[<>"]/);
      expect(shown(names.at(-1)!)).toBe(text);
    }
  });
});
