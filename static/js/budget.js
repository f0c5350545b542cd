// The compute budget in the browser: before a page asks for a model, POST /api/budget (app/config/limits.py) says
// whether it fits, which size to blame and each size's limit given the others. No cost formula is retyped here.
import { pageData, t } from './i18n.js';
import { ApiError } from './api.js';
import { apiUrl, isStaticSite, lookupBaked } from './staticsite.js';

/** The server's budget report for this model config; {refused: ApiError} when the request model refuses the
 *  combination itself (a 422: nothing else would be accepted either); null when it cannot be had (nothing blocked). */
export async function checkBudget(config) {
  const seed = pageData.static?.server ? null : pageData.budget;   // the page's default model, answered with the page
  if (seed && sameConfig(config, seed.config)) return structuredClone(seed.report);
  if (isStaticSite) return (await lookupBaked('POST', '/api/budget', config, { quiet: true }))?.value ?? null;  // a view not baked: its charts say so
  try {
    const response = await fetch(apiUrl('/api/budget'), { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(config) });
    if (response.status === 422) return { refused: new ApiError(422, await response.json()) };
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

function sameConfig(a, b) {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

/** The refusal in the page's language: the setting to blame, its largest value that fits, and the other ways out. */
export function budgetMessage(report, labelOf) {
  const over = Object.entries(report.limits).filter(([, l]) => l.max !== null && l.value > l.max);
  if (!report.cause) {
    return t('budget.several', { sizes: Object.keys(report.limits).map(labelOf).join(t('budget.list_sep')) });
  }
  const limit = report.limits[report.cause];
  const others = over.filter(([name]) => name !== report.cause)
    .map(([name, l]) => t('budget.other', { setting: labelOf(name), max: l.max })).join(t('budget.list_sep'));
  return t('budget.over', { setting: labelOf(report.cause), value: limit.value, max: limit.max })
    + (others ? t('budget.others', { others }) : '');
}
