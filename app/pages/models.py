"""The /models page: real pretrained Transformers (a Post-LN and a pre-norm one) on a sentence the user types.
Its strings (English + Chinese) and its page; the models this server has are handed to the page in
`extra`, and without the [models] extra the page says in one line what to install."""

from __future__ import annotations

from ..config.real import DEFAULT_TEXT, MAX_TEXT_CHARS, MAX_TOKENS
from ..figures import real_charts
from ..figures.real_common import STRINGS as MODEL_NAMES
from ..services.real_models import models_payload
from .page import Page

STRINGS = {
    "nav.models": ("Real models", "真实模型"),
    "models.title": (
        "Real models: does it happen in a pretrained Transformer?",
        "真实模型：预训练 Transformer 里也这样吗？",
    ),
    "models.intro": (
        "Two real pretrained models read your sentence on this server, offline. MiniLM is a BERT: Post-LN, so every "
        "block's output is a LayerNorm output, whose norm its learned gain sets (the caption says whether the tokens "
        "end pinned together). SmolLM2 is a Llama: pre-norm, so nothing "
        "normalises the residual stream and it snowballs from block to block, while the first token carries a "
        "massive activation. Every claim is also checked on a built-in set of sixteen sentences.",
        "两个真实的预训练模型在本服务器上离线读取你的句子。MiniLM 属于 BERT 家族：Post-LN，每个块的输出都是 LayerNorm "
        "的输出，其范数由学到的增益决定（图注说明各词元是否被固定在一起）。SmolLM2 属于 Llama 家族：Pre-norm，残差流从不被归一化，逐块像滚雪球一样增长，"
        "而第一个词元携带巨大的激活值。每个结论还在内置的十六个句子上核对。",
    ),
    "models.missing": (
        "Real models are not installed on this server. Install them with: {command}",
        "本服务器没有安装真实模型。安装命令：{command}",
    ),
    "models.quantised": (
        "SmolLM2's weights are a 4-bit approximation (a Q4_1 GGUF file, dequantised to float32).",
        "SmolLM2 的权重是 4 位近似值（Q4_1 GGUF 文件，反量化为 float32）。",
    ),
    "models.model": ("Model", "模型"),
    "models.model.help": (
        "The model every chart shows; the stream chart draws a second one beside it.",
        "每张图显示的模型；残差流图旁边还会画出第二个模型。",
    ),
    "models.compare": ("Beside it (stream chart)", "并排对比（残差流图）"),
    "models.compare.help": ("A second model drawn in the stream chart.", "在残差流图中一起画出的第二个模型。"),
    "models.text": ("Sentence", "句子"),
    "models.text.help": (
        f"Any sentence in English or Chinese, at most {MAX_TOKENS} tokens.",
        f"任意英文或中文句子，最多 {MAX_TOKENS} 个词元。",
    ),
    # the second model's menu names each model as the first one's does (app/figures/real_common.py)
    **{
        key.replace("enum.model.", "enum.compare."): pair
        for key, pair in MODEL_NAMES.items()
        if key.startswith("enum.model.")
    },
    "enum.compare.none": ("none", "无"),
    "models.error.unavailable": (
        "This model cannot be loaded on this server now; the other model still works.",
        "该模型目前无法在本服务器上加载；另一个模型仍可使用。",
    ),
    "models.error.text": (
        "The text cannot be traced: at most {limit} tokens, printable characters, newline and tab.",
        "无法计算该文本：最多 {limit} 个词元，只能包含可打印字符、换行符和制表符。",
    ),
    "models.count": ("{count} of at most {limit} tokens.", "{count} 个词元（最多 {limit} 个）。"),
    "models.count.over": (
        "{count} tokens: more than the {limit} a trace may have.",
        "{count} 个词元：超过了一次计算允许的 {limit} 个。",
    ),
    "models.truncate": ("Keep the first {limit} tokens", "只保留前 {limit} 个词元"),
    "models.conversion": (
        "The first trace of {models} converts its 4-bit weights to float32 once (about {low}–{high} s on 2 cores); "
        "later traces load it in a second or two.",
        "{models} 的第一次计算会把 4 位权重一次性转换为 float32（2 核上约 {low}–{high} 秒）；之后一两秒即可加载。",
    ),
}


CHARTS = {kind.key: kind.request for kind in real_charts()}  # the page's charts, in order, and their request kinds


def strings() -> dict[str, tuple[str, str]]:
    return STRINGS


def pages() -> list[Page]:
    payload = models_payload(with_conversion=False)
    names = [m["name"] for m in payload["models"]]
    return [
        Page(
            key="models",
            path="/models",
            title_key="models.title",
            charts=tuple(CHARTS) if payload["ready"] else (),
            nav_key="nav.models",
            nav_order=90,
            model_controls=False,
            extra={
                "ready": payload["ready"],
                "install": " && ".join(payload["install"]),
                "models": names,
                "default_model": "smollm2" if "smollm2" in names else (names[0] if names else ""),
                "default_compare": "minilm" if "minilm" in names and "smollm2" in names else "none",
                "default_text": DEFAULT_TEXT,
                "max_text_chars": MAX_TEXT_CHARS,
                "max_tokens": MAX_TOKENS,
                "charts": CHARTS,
            },
        )
    ]
