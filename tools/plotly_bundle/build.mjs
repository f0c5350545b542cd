// Builds ../../static/vendor/plotly.min.js: plotly.js with only the trace types ResNorm Explorer draws, the way
// plotly.js builds its own partial bundles (lib/index-basic.js, esbuild-config.js): core + Plotly.register(traces).
// The full bundle is 4.8 MB and takes a second to parse on a laptop; this one is a quarter of that.
// A page that draws a trace type not listed here gets an empty chart: tests/test_assets.py and the browser tests fail.
import { build } from 'esbuild';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TRACES = ['bar', 'heatmap', 'scatter', 'table'];   // scatter is in plotly.js's core; listed for the header

const here = dirname(fileURLToPath(import.meta.url));
const vendor = join(here, '..', '..', 'static', 'vendor');
const plotlyDir = join(here, 'node_modules', 'plotly.js');
const { version } = JSON.parse(readFileSync(join(plotlyDir, 'package.json'), 'utf8'));
const registered = TRACES.filter((name) => name !== 'scatter').map((name) => `require('plotly.js/lib/${name}')`);

const result = await build({
  stdin: {
    contents: `var Plotly = require('plotly.js/lib/core');\nPlotly.register([${registered.join(', ')}]);\nmodule.exports = Plotly;\n`,
    resolveDir: here,
    sourcefile: 'resnorm-plotly-entry.js',
  },
  bundle: true,
  minify: true,
  format: 'iife',
  globalName: 'Plotly',
  target: 'es2016',
  define: { global: 'window', 'define.amd': 'false' },
  alias: { stream: 'stream-browserify' },
  loader: { '.css': 'empty' },      // maplibre-gl's stylesheet, only for map traces (not in this bundle)
  legalComments: 'eof',
  banner: { js: `/**\n* plotly.js v${version} (ResNorm Explorer partial bundle; traces: ${TRACES.join(', ')})\n`
    + '* Copyright 2012-2026, Plotly, Inc. Licensed under the MIT license (LICENSE.plotly.js.txt)\n*/' },
  footer: { js: 'window.Plotly = Plotly;' },
  write: false,
});
writeFileSync(join(vendor, 'plotly.min.js'), result.outputFiles[0].contents);
copyFileSync(join(plotlyDir, 'LICENSE'), join(vendor, 'LICENSE.plotly.js.txt'));
console.log(`static/vendor/plotly.min.js: plotly.js ${version}, traces ${TRACES.join(', ')}, `
  + `${(result.outputFiles[0].contents.length / 1e6).toFixed(2)} MB`);
