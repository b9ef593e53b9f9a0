/**
 * The one Highcharts instance of the console, with its download menu and the console's point styles that Highcharts
 * does not ship (cross, star, line) registered as marker symbols.
 */
import Highcharts from 'highcharts';
// Area ranges (the envelope bands of Analyze).
import 'highcharts/highcharts-more';
// Chart downloads (PNG, SVG, CSV) made in the browser, without Highcharts' export server.
import 'highcharts/modules/exporting';
import 'highcharts/modules/export-data';
// WebGL drawing of series past a few thousand points (chart-options.ts decides which). It evaluates no
// code and hands its canvas to the SVG as a data: image, which the api's CSP allows (img-src data:).
import 'highcharts/modules/boost';

type SymbolFn = (x: number, y: number, w: number, h: number) => Highcharts.SVGPathArray;

const customSymbols: Record<string, SymbolFn> = {
  cross: (x, y, w, h) => [['M', x, y], ['L', x + w, y + h], ['M', x + w, y], ['L', x, y + h]],
  line: (x, y, w, h) => [['M', x, y + h / 2], ['L', x + w, y + h / 2]],
  star: (x, y, w, h) => {
    const cx = x + w / 2;
    const cy = y + h / 2;
    const outer = Math.min(w, h) / 2;
    const inner = outer * 0.45;
    const path: Highcharts.SVGPathArray = [];
    for (let i = 0; i < 10; i += 1) {
      const radius = i % 2 === 0 ? outer : inner;
      const angle = -Math.PI / 2 + (i * Math.PI) / 5;
      path.push([i === 0 ? 'M' : 'L', cx + radius * Math.cos(angle), cy + radius * Math.sin(angle)]);
    }
    path.push(['Z']);
    return path;
  },
};

// The tooltip is HTML that Highcharts sanitises; the comment block inside it keeps its test id.
if (!Highcharts.AST.allowedAttributes.includes('data-testid')) Highcharts.AST.allowedAttributes.push('data-testid');

const symbols = Highcharts.SVGRenderer.prototype.symbols as unknown as Record<string, SymbolFn>;
for (const [name, draw] of Object.entries(customSymbols)) {
  if (!symbols[name]) symbols[name] = draw;
}

// Re-exported: the symbol names are pure data, kept where modules without a chart can read them.
export { highchartsSymbol } from './chart-constants.ts';

export { Highcharts };
