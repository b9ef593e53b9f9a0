/**
 * Text and colours from data on their way into Highcharts. Every string Highcharts is given is markup
 * to it: titles, axis titles, legend and plot-line labels are read as a small subset of HTML and drawn
 * in SVG (links included), and a useHTML tooltip is HTML. Highcharts 13 has no public escaping helper,
 * so names, units and comments go through `chartText`, which Highcharts turns back into the literal
 * characters when it draws: `<a href="//example.com">` reads as those characters and is never a link.
 */
import { COMMENT_COLOR_PATTERN } from '@bioprocess/shared/entities';

/** The entities Highcharts' renderer decodes when it draws text (its `renderer.escapes`). */
const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text from data, escaped for any Highcharts text option, format output or HTML tooltip. */
export function chartText(text: string | null | undefined): string {
  return String(text ?? '').replace(/[&<>"']/g, (character) => ENTITIES[character]!);
}

/**
 * A colour from data for a style attribute or an SVG colour: kept only when it is a hex colour (the
 * api's rule; older rows may hold anything), else the fallback.
 */
export function chartColor(color: string | null | undefined, fallback: string): string {
  return typeof color === 'string' && COMMENT_COLOR_PATTERN.test(color) ? color : fallback;
}
