// /lecture: the lesson as a slide deck (app/experiments/lecture is the deck's data). One module, three roles:
// the deck itself, the speaker view (?view=speaker, opened with S) and one slide's chart alone (/embed/lecture-<id>).
import { pageData, t } from '../i18n.js';
import { describeError } from '../api.js';
import { chartView, draw } from '../charts.js';
import { Deck, slideFromUrl, themeFromUrl } from '../lecture/deck.js';
import { SyncChannel, startSpeakerView } from '../lecture/speaker.js';
import { isTrainingSlide, newestFirst, train, viewFor } from '../lecture/sources.js';

const DECK = pageData.extra.deck;
performance.mark('lecture-module');   // tools/bench_lecture.py reads these marks

/** /embed/lecture-<id>: the slide's chart and its measured caption, nothing else (a training chart trains on click). */
async function embed(key) {
  const slide = DECK.find((s) => `lecture-${s.id}` === key);
  const element = document.querySelector(`[data-chart="${key}"]`);
  const caption = document.createElement('p');
  caption.className = 'caption embed-caption';
  element.closest('.chart-wrap').after(caption);
  const figure = (view) => chartView(view, ...(themeFromUrl() === 'slide' ? ['slide'] : []));
  const render = async (view) => {
    await draw(element, figure(view));
    caption.textContent = view.claim.pending ? t('lecture.train_click') : view.caption;
    return view;
  };
  try {
    const first = await render(await viewFor(slide));
    if (isTrainingSlide(slide) && first.claim.pending) {
      const onView = newestFirst((view) => draw(element, figure(view)));
      element.addEventListener('click', () => train(slide, { onView })
        .then(async (view) => { await onView.settled(); return render(view); })
        .catch((error) => { caption.textContent = describeError(error); }), { once: true });
    }
  } catch (error) {
    caption.textContent = describeError(error);
  }
}

/** The offline file opened as lecture.html?embed=<slide id> (its footer's "Embed this chart", a static site's slide
 *  embeds): that slide's chart and caption alone, as /embed/lecture-<id> shows them, from the views baked in. */
function embedFromFile(id) {
  const main = document.createElement('main');
  main.style.cssText = 'height:100vh;display:flex;flex-direction:column;margin:0;padding:0';
  const wrap = document.createElement('div');
  wrap.className = 'chart-wrap';
  wrap.style.cssText = 'flex:1;min-height:0';
  const chart = document.createElement('div');
  chart.dataset.chart = `lecture-${id}`;
  chart.style.height = '100%';
  wrap.append(chart);
  main.append(wrap);
  document.body.replaceChildren(main);
  document.body.classList.add('file-embed');
  if (!DECK.some((s) => s.id === id && s.chart)) {
    const note = document.createElement('p');
    note.textContent = t('lecture.embed_unknown', { id, slides: DECK.filter((s) => s.chart).map((s) => s.id).join(', ') });
    main.replaceChildren(note);
    return Promise.resolve();
  }
  return embed(`lecture-${id}`);
}

function speaker() {
  let view = null;
  const channel = new SyncChannel((message) => {
    if (message.type === 'slide' || message.type === 'goto') view?.show(message.index);
    if (message.type === 'reveal') view?.revealed(message.index);
  });
  view = startSpeakerView(slideFromUrl(), channel);
  document.body.dataset.ready = '1';
  document.addEventListener('keydown', (event) => {
    const moves = { ArrowRight: 1, PageDown: 1, ' ': 1, ArrowLeft: -1, PageUp: -1 };
    if (event.key in moves) {
      event.preventDefault();
      view.go(view.current() + moves[event.key]);
    }
  });
}

async function deck() {
  let presenter = null;
  const channel = new SyncChannel((message) => {
    if (message.type === 'goto' || message.type === 'slide') presenter?.show(message.index, { broadcast: false });
    if (message.type === 'reveal') presenter?.reveal(message.index, { broadcast: false });
    if (message.type === 'hello') channel.post({ type: 'slide', index: presenter.current });
  });
  presenter = new Deck(channel);
  await presenter.start();
  document.body.dataset.ready = '1';
}

const fileEmbed = pageData.extra.baked ? new URLSearchParams(window.location.search).get('embed') : null;
if (pageData.embed) embed(pageData.embed).finally(() => { document.body.dataset.ready = '1'; });
else if (fileEmbed) embedFromFile(fileEmbed).finally(() => { document.body.dataset.ready = '1'; });
else if (new URLSearchParams(window.location.search).get('view') === 'speaker') speaker();
else deck();
