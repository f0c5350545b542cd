// /models: real pretrained Transformers on the user's sentence, from POST /api/real_trace. The stream norm per
// layer for a Post-LN model (MiniLM: pinned by its LayerNorms) beside a pre-norm one (SmolLM2: snowballing, with a
// first-token sink), the layer x token heatmap, and the gradient of the next-token loss per layer.
import { runPage, scaleParam } from '../page.js';
import { postJSON } from '../api.js';
import { layout, line, hline, logHeatmap, heatmapLayout, PALETTE, t, fmt } from '../charts.js';
import { pageData, has } from '../i18n.js';

const EXTRA = pageData.extra;
const COLOURS = [PALETTE.blue, PALETTE.vermillion];
const answers = new Map();   // model + text -> promise: the three charts share the requests

function noControlCharacters(text) {
  // the server refuses C0/C1 control characters (app/config/real.py): the same test before sending
  // eslint-disable-next-line no-control-regex
  return text.trim().length > 0 && text.length <= EXTRA.max_text_chars && !/[\u0000-\u001f\u007f-\u009f]/.test(text);
}

function traceOf(model, text) {
  const key = JSON.stringify([model, text]);
  if (!answers.has(key)) {
    const promise = postJSON('/api/real_trace', { model, text });
    answers.set(key, promise);
    promise.catch(() => answers.delete(key));
    if (answers.size > 12) answers.delete(answers.keys().next().value);
  }
  return answers.get(key);
}

function shown(state) {
  const names = [state.model];
  if (state.compare !== 'none' && state.compare !== state.model) names.push(state.compare);
  return names;
}

const shortName = (trace) => (has(`enum.model.${trace.model.name}`) ? t(`enum.model.${trace.model.name}`) : trace.model.name);
// In a legend the model's name alone (its family and norm placement are in the title, the caption and the menu): a
// phone's chart is ~350 px wide and Plotly does not wrap legend entries.
const legendName = (trace) => shortName(trace).split(/ ?[（(]/)[0];

function streamFigure(data, state) {
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: t('chart.models_stream.title'), x: t('models.axis.layer'),
    y: t('chart.models_stream.y'), ylog: state.y_scale === 'log' }) };
  data.forEach((trace, i) => {
    const model = legendName(trace), color = COLOURS[i % COLOURS.length];
    fig.data.push(line(theme, { name: t('models.series.rest', { model }), x: trace.layers, y: trace.stream.mean_without_first, color }));
    fig.data.push(line(theme, { name: t('models.series.first', { model }), x: trace.layers, y: trace.stream.first, color, dash: 'dot' }));
    const theory = trace.theory;
    if (theory.pinned_level) {
      fig.data.push(line(theme, { name: t('models.series.pinned', { model }), x: trace.layers.slice(1), y: theory.pinned_level,
        color: PALETTE.green, dash: 'dash', markers: false }));
      hline(theme, fig, theory.sqrt_d, t('models.mark.sqrt_d', { value: fmt(theory.sqrt_d), model }));
    }
    if (theory.growth) {
      fig.data.push(line(theme, { name: t('models.series.fit', { model, factor: fmt(theory.growth.per_block) }),
        x: theory.growth.layers, y: theory.growth.fitted, color: PALETTE.black, dash: 'dash', markers: false }));
    }
  });
  return fig;
}

function streamCaption(data) {
  const parts = [t('caption.models_stream')];
  for (const trace of data) {
    const model = shortName(trace), stream = trace.stream, growth = trace.theory.growth;
    if (growth) {
      const last = stream.mean_without_first.length - 1;
      parts.push(t('models.caption.pre', { model, start: fmt(stream.mean_without_first[1]), end: fmt(stream.mean_without_first[last]),
        blocks: last, over: fmt(growth.over_blocks), per: fmt(growth.per_block_endpoints), first: fmt(Math.max(...stream.first)),
        ratio: fmt(trace.summary.first_token_ratio_max) }));
    } else if (trace.post_ln) {
      const outputs = stream.mean.slice(1);
      parts.push(t('models.caption.post', { model, low: fmt(Math.min(...outputs)), high: fmt(Math.max(...outputs)),
        before: fmt(Math.max(...trace.post_ln.token_spread_before_norm)), after: fmt(Math.max(...trace.post_ln.token_spread_after_norm)) }));
    }
  }
  return parts.join(' ');
}

function tokensFigure(trace, state) {
  const theme = state.theme;
  const x = trace.tokens.map((_, i) => i);
  const fig = { data: [logHeatmap(theme, { x, y: trace.layers, values: trace.stream.per_token, colorbarTitle: '‖x_l‖' })],
    layout: heatmapLayout(theme, { title: `${t('chart.models_tokens.title')} · ${shortName(trace)}`, x: t('models.axis.token'),
      y: t('models.axis.layer') }) };
  fig.data[0].hovertemplate = '%{customdata:.4g}<extra></extra>';
  Object.assign(fig.layout.xaxis, { tickvals: x, ticktext: trace.tokens.map((token) => token.trim() || '␣'), tickangle: -45 });
  return fig;
}

function tokensCaption(trace) {
  const parts = [t('caption.models_tokens')];
  if (trace.summary.first_token_ratio_max > 10) {
    parts.push(t('models.caption.sink', { token: trace.tokens[0].trim(), ratio: fmt(trace.summary.first_token_ratio_max) }));
  }
  if (trace.unknown_tokens) parts.push(t('models.caption.unknown', { count: trace.unknown_tokens }));
  return parts.join(' ');
}

function gradientFigure(trace, state) {
  const theme = state.theme;
  const fig = { data: [], layout: layout(theme, { title: t('chart.models_gradient.title'), x: t('models.axis.layer'),
    y: t('chart.models_gradient.y'), ylog: state.y_scale === 'log' }) };
  if (trace.gradient) {
    fig.data.push(line(theme, { name: shortName(trace), x: trace.layers, y: trace.gradient.per_block, color: PALETTE.purple }));
  }
  fig.layout.showlegend = false;
  return fig;
}

function gradientCaption(trace) {
  const model = shortName(trace), gradient = trace.gradient;
  if (!gradient) return `${t('models.no_gradient', { model })} ${t('caption.models_gradient')}`;
  const perBlock = gradient.per_block;
  return t('models.caption.gradient', { model, loss: fmt(gradient.loss), ratio: fmt(perBlock[1] / perBlock[perBlock.length - 1]) });
}

const models = EXTRA.models || [];
runPage({
  params: [
    { name: 'model', type: 'string', enum: models, default: EXTRA.default_model, group: 'page', label: 'models.model', help: 'models.model.help' },
    { name: 'compare', type: 'string', enum: [...models, 'none'], default: EXTRA.default_compare, group: 'page', label: 'models.compare',
      help: 'models.compare.help' },
    { name: 'text', type: 'string', default: EXTRA.default_text, group: 'page', label: 'models.text', help: 'models.text.help',
      validate: noControlCharacters },
    scaleParam('y_scale', 'log'),
  ],
  charts: [
    { key: 'models-stream', dataKey: (state) => [shown(state), state.text],
      load: (state) => Promise.all(shown(state).map((name) => traceOf(name, state.text))),
      figure: streamFigure, caption: streamCaption, json: (data) => data,
      table: (data) => data.flatMap((trace) => trace.layers.map((layer, i) => ({ model: trace.model.name, layer,
        mean_without_first: trace.stream.mean_without_first[i], first_token: trace.stream.first[i], mean: trace.stream.mean[i] }))) },
    { key: 'models-tokens', dataKey: (state) => [state.model, state.text], load: (state) => traceOf(state.model, state.text),
      figure: tokensFigure, caption: tokensCaption,
      table: (trace) => trace.layers.flatMap((layer, l) => trace.tokens.map((token, i) => ({ layer, position: i, token,
        norm: trace.stream.per_token[l][i] }))) },
    { key: 'models-gradient', dataKey: (state) => [state.model, state.text], load: (state) => traceOf(state.model, state.text),
      figure: gradientFigure, caption: gradientCaption,
      table: (trace) => trace.layers.map((layer, i) => ({ layer, gradient: trace.gradient ? trace.gradient.per_block[i] : null })) },
  ],
});
