// Unit tests of static/js/format.js (node --test; tests/test_format_js.py runs them from pytest).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fmt, fmtFactor, superscript, MINUS } from '../../static/js/format.js';

test('three significant digits, trailing zeros dropped', () => {
  assert.equal(fmt(4), '4');
  assert.equal(fmt(4.000001, { digits: 6 }), '4');            // was "μ = 4.00000"
  assert.equal(fmt(3.6234), '3.62');
  assert.equal(fmt(0.014923), '0.0149');
  assert.equal(fmt(490, { digits: 2 }), '490');                // was "4.9e+2"
  assert.equal(fmt(56.2, { digits: 2 }), '56');
  assert.equal(fmt(9412.3402, { digits: 6 }), '9412.34');
  assert.equal(fmt(0.001), '0.001');
  assert.equal(fmt(1.0000001, { digits: 4, zeros: true }), '1.000');   // the digits measured, when asked
});

test('very small and very large numbers as ×10ⁿ with superscripts', () => {
  assert.equal(fmt(0.9 ** 96, { digits: 6 }), '4.04838×10⁻⁵'); // was "4.04838e−5"
  assert.equal(fmt(0.000999), '9.99×10⁻⁴');
  assert.equal(fmt(8.28e7), '8.28×10⁷');                       // was "8.28e7"
  assert.equal(fmt(5.8e26, { digits: 2 }), '5.8×10²⁶');
  assert.equal(fmt(82840), '82800');                           // under 10⁵: plain
  assert.equal(fmt(99960), '1×10⁵');                           // rounding carries into the exponent
  assert.equal(fmt(1e-300), '1×10⁻³⁰⁰');
  assert.equal(superscript(-12), '⁻¹²');
});

test('Chinese: 万 and 亿, powers of ten beyond', () => {
  assert.equal(fmt(8.28e7, { lang: 'zh' }), '8280万');         // was "8.28e7 次乘加"
  assert.equal(fmt(12345, { lang: 'zh' }), '1.23万');
  assert.equal(fmt(9999.7, { lang: 'zh' }), '1万');
  assert.equal(fmt(5.21e10, { lang: 'zh' }), '521亿');
  assert.equal(fmt(1234, { lang: 'zh' }), '1230');
  assert.equal(fmt(5.8e26, { lang: 'zh', digits: 2 }), '5.8×10²⁶');
  assert.equal(fmt(4.05e-5, { lang: 'zh' }), '4.05×10⁻⁵');
});

test('a true minus sign, integers, and no-number values', () => {
  assert.equal(fmt(-0.8165, { digits: 4 }), `${MINUS}0.8165`);
  assert.equal(fmt(-4.05e-5), `${MINUS}4.05×10⁻⁵`);
  assert.equal(fmt(-8.28e7, { lang: 'zh' }), `${MINUS}8280万`);
  assert.equal(fmt(95.6, { digits: 0 }), '96');
  assert.equal(fmt(-0.2, { digits: 0 }), '0');
  assert.equal(fmt(0), '0');
  assert.equal(fmt(null), '—');
  assert.equal(fmt(Number.NaN), '—');
  assert.equal(fmt(Infinity), '∞');
  assert.equal(fmt(-Infinity), `${MINUS}∞`);
  assert.equal(fmtFactor(18.04), '×18');
});

test('no raw JavaScript exponent ever leaks', () => {
  for (let e = -320; e <= 308; e += 7) {
    for (const lang of ['en', 'zh']) {
      for (const digits of [1, 2, 3, 6]) {
        const text = fmt(1.2345 * 10 ** e, { lang, digits });
        assert.doesNotMatch(text, /e[+-]?\d|NaN|undefined/, `${e} ${lang} ${digits}: ${text}`);
      }
    }
  }
});

test('subscripts typeset, not typed', async () => {
  const { typeset } = await import('../../static/js/format.js');
  assert.equal(typeset('Mean token gradient ‖∂loss/∂x_l‖'), 'Mean token gradient ‖∂loss/∂xₗ‖');
  assert.equal(typeset('√(‖x_0‖² + c·l)'), '√(‖x₀‖² + c·l)');
  assert.equal(typeset('Theory √d_model = 8'), 'Theory √d<sub>model</sub> = 8');
  assert.equal(typeset('Theory √d_model = 8', { html: false }), 'Theory √d_model = 8');
  assert.equal(typeset('词元平均范数 ‖x_l‖'), '词元平均范数 ‖xₗ‖');
  assert.equal(typeset('d_model=64 in the URL'), 'd_model=64 in the URL');       // code is left alone
  assert.equal(typeset('act_norm and grad_survival'), 'act_norm and grad_survival');  // words, not symbols
  assert.equal(typeset(null), null);
});
