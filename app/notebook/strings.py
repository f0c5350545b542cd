"""The Python API's and the command line's own words, in English and Chinese, looked up here (`t`), not in the
pages' table: a notebook that never imports a page still speaks both languages."""

from __future__ import annotations

from .. import i18n

STRINGS = {
    "nb.summary": ("Trace of {model}", "{model} 的追踪"),
    "nb.grad_survival": ("Gradient survival (layer 1 ÷ layer L)", "梯度存活率（第 1 层 ÷ 第 L 层）"),
    "nb.norm_growth": ("Norm growth (layer L ÷ layer 1)", "范数增长（第 L 层 ÷ 第 1 层）"),
    "nb.loss": ("Loss", "损失"),
    "nb.nonfinite": ("Overflow (inf/NaN) from layer", "从该层起溢出（inf/NaN）"),
    "nb.parameters": ("Parameters", "参数量"),
    "nb.none": ("none", "无"),
    "nb.sweep_progress": ("Sweep depths", "扫描深度"),
    "nb.train_progress": ("Training", "训练"),
    "nb.interrupted": (
        "Interrupted: kept the {done} of {total} results computed so far.",
        "已中断：保留已算完的 {done} / {total} 个结果。",
    ),
    "nb.no_pandas": (
        "to_pandas() needs pandas: pip install pandas",
        "to_pandas() 需要 pandas：pip install pandas",
    ),
    "nb.no_kaleido": (
        "saving .{kind} needs kaleido and a Chromium browser: pip install kaleido (it finds an installed Chromium or "
        "Chrome, or the one at BROWSER_PATH); .html needs neither",
        "保存 .{kind} 需要 kaleido 和 Chromium 浏览器：pip install kaleido（它会找到已安装的 Chromium 或 Chrome，"
        "或 BROWSER_PATH 指向的浏览器）；.html 两者都不需要",
    ),
    "nb.claim_holds": ("Claim checked: it holds on these numbers.", "论断已核对：在这些数值上成立。"),
    "nb.claim_fails": ("Claim does NOT hold: {why}", "论断不成立：{why}"),
}


def t(key: str, lang: str = "en", **values: object) -> str:
    """This table's string for key in lang, or a shared one (app/i18n.py), with {placeholders} filled."""
    return i18n.lookup(STRINGS, key, lang, **values)
