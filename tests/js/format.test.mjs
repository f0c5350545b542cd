// Unit tests of static/js/format.js (node --test; tests/test_format_js.py runs them from pytest).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fmt, superscript, MINUS } from '../../static/js/format.js';

// The cases both formatters share (tests/test_numbers.py runs the same table through app/numbers.py).
const TABLE = JSON.parse(readFileSync(new URL('./format_cases.json', import.meta.url), 'utf8'));
const SPECIAL = { NaN: Number.NaN, Infinity: Infinity, '-Infinity': -Infinity };

test('the shared table: plain digits to 10⁵, ×10ⁿ beyond, 万/亿 for counts only', () => {
  for (const [value, options, expected] of TABLE.cases) {
    assert.equal(fmt(value in SPECIAL ? SPECIAL[value] : value, options), expected, `${value} ${JSON.stringify(options)}`);
  }
  assert.equal(fmt(0.9 ** 96, { digits: 6 }), '4.04838×10⁻⁵');
  assert.equal(superscript(-12), '⁻¹²');
  assert.equal(fmt(-0.8165, { digits: 4 }), `${MINUS}0.8165`);
});

test('a measured value never takes 万 or 亿', () => {
  for (let e = 3; e <= 20; e += 1) {
    for (const m of [1, 1.000000098, 6.5504, 9.9996]) {
      for (const digits of [1, 3, 6, 10]) assert.doesNotMatch(fmt(m * 10 ** e, { lang: 'zh', digits }), /[万亿]/);
    }
  }
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
