// /lecture: the lesson as a slide deck (app/experiments/lecture is the deck's data). One module, three roles:
// the deck itself, the speaker view (?view=speaker, opened with S) and one slide's chart alone (/embed/lecture-<id>).
import { pageData, t } from '../i18n.js';
import { describeError } from '../api.js';
import { draw } from '../charts.js';
import { Deck, slideFromUrl, themeFromUrl } from '../lecture/deck.js';
import { SyncChannel, startSpeakerView } from '../lecture/speaker.js';
import { answersFor, isTrainingSlide, train, trained } from '../lecture/sources.js';
import { figureFor } from '../lecture/figures.js';
import { evaluate, statement } from '../lecture/claims.js';

const DECK = pageData.extra.deck;
performance.mark('lecture-module');   // tools/bench_lecture.py reads these marks

/** /embed/lecture-<id>: the slide's chart and its measured caption, nothing else (a training chart trains on click). */
async function embed(key) {
  const slide = DECK.find((s) => `lecture-${s.id}` === key);
  const element = document.querySelector(`[data-chart="${key}"]`);
  const caption = document.createElement('p');
  caption.className = 'caption embed-caption';
  element.closest('.chart-wrap').after(caption);
  const render = async (answers) => {
    await draw(element, figureFor(slide, answers, themeFromUrl()));
    const ready = !isTrainingSlide(slide) || trained(slide);
    caption.textContent = ready ? statement(slide.claim, evaluate(slide.claim, answers)) : t('lecture.train_click');
  };
  try {
    await render(await answersFor(slide));
    if (isTrainingSlide(slide) && !trained(slide)) {
      element.addEventListener('click', () => train(slide, (answers) => draw(element, figureFor(slide, answers, themeFromUrl())))
        .then(render), { once: true });
    }
  } catch (error) {
    caption.textContent = describeError(error);
  }
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

if (pageData.embed) embed(pageData.embed).finally(() => { document.body.dataset.ready = '1'; });
else if (new URLSearchParams(window.location.search).get('view') === 'speaker') speaker();
else deck();
