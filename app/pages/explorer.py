"""The four explorer pages: a tour, the snowballing stream, the gradients, and variants side by side.

Their controls come from TraceConfig (`model_controls`), their charts from /api/trace and /api/sweep.
"""

from __future__ import annotations

from typing import Any

from ..config import PRESETS, REFERENCE_MODEL, TraceConfig, preset_config
from ..experiments.grad_profile import BAND, GradProfile
from ..experiments.requests import Part
from ..experiments.sweep import SweepRequest
from ..experiments.tour import TourRequest
from .page import Page

HOME: dict[str, Any] = {"depth": 24}  # the tour's thumbnail: Post-LN vs Pre-LN (app/experiments/tour.py) at depth 24
# /gradients opens on the lecture's reference model (the shortcut keeps the gradient on every seed; without it the
# verdict depends on the seed, and the caption says so: app/figures/gradients.py); the heatmap's
# sweep_to 0 means "up to the model's depth".
GRADIENTS: dict[str, Any] = {**REFERENCE_MODEL, "sweep_to": 0}
# /compare opens on the fairest pair: the 2017 recipe with the norm after the add, and the same recipe with it inside.
COMPARE: dict[str, Any] = {"variants": ["post_ln", "pre_ln_2017"]}

# The explorer pages' own words (key: (English, 中文)); words shared with other pages live in app/i18n.py.
STRINGS: dict[str, tuple[str, str]] = {
    # Tour (/)
    "home.title": ("A tour: residual connections and normalization", "导览：残差连接与归一化"),
    "home.lead": (
        "Every chart here is drawn from a real PyTorch model built on this server for the settings you choose.",
        "这里的每张图都来自服务器按你的设置现场构建并运行的 PyTorch 模型。",
    ),
    "home.residual_h": ("The residual connection", "残差连接"),
    "home.residual_p": (
        "A block computes y = x + f(x): the input x travels on unchanged beside the block. Backpropagation then "
        "multiplies one factor (1 + f′) per layer instead of f′, so the gradient reaches the first layers even in a deep stack.",
        "一个块计算 y = x + f(x)：输入 x 绕过该块原样向前传。反向传播时每层乘的因子是 (1 + f′) 而不是 f′，"
        "所以即使网络很深，梯度也能到达最前面的层。",
    ),
    "home.norm_h": ("The normalization layer", "归一化层"),
    "home.norm_p": (
        "LayerNorm rescales each token vector to mean 0 and variance 1. Where it sits decides what it controls: "
        "after the add (Post-LN) it pins every vector to length √d; inside the branch (Pre-LN) the stream is left free to grow.",
        "LayerNorm 把每个词元向量缩放到均值 0、方差 1。它的位置决定了它约束的是什么：放在相加之后（Post-LN）会把每个向量的长度固定为 √d；"
        "放在分支内部（Pre-LN）则任由残差流增长。",
    ),
    "home.pages_h": ("Explore", "开始探索"),
    "home.card.norms": (
        "The snowball: how the length of the residual stream grows layer by layer.",
        "滚雪球：残差流的长度如何逐层增长。",
    ),
    "home.card.gradients": (
        "How far the gradient survives, with and without the shortcut, at every depth.",
        "有捷径和没有捷径时，梯度各能回传多远；逐个深度计算。",
    ),
    "home.card.compare": (
        "Pre-LN against Post-LN (or any 2 to 4 variants) in aligned panels.",
        "Pre-LN 对比 Post-LN（或任选 2 到 4 种变体），各面板坐标轴对齐。",
    ),
    # /norms
    "norms.title": ("The snowball: activation norms along the residual stream", "滚雪球：残差流上的激活范数"),
    "norms.intro": (
        "The length of the token vectors after every block, averaged over tokens, for a freshly initialised model.",
        "刚初始化的模型中，每个块之后词元向量的长度（对词元取平均）。",
    ),
    "enum.yscale.auto": ("Automatic", "自动"),  # /norms' axis: logarithmic when the values span > 3 decades
    # the /norms chart's own words are app/figures/norms.py's (the registry collects every chart's)
    # /gradients
    "gradients.title": ("How far does the gradient survive?", "梯度能传多远？"),
    "gradients.intro": (
        "The gradient of the loss with respect to the stream after each block, for one backward pass at initialisation.",
        "初始化时一次反向传播中，损失对每个块之后残差流的梯度。",
    ),
    "status.seeds_pending": (
        "Seeds 1–3 of the band: computing, to check the verdict holds on them too…",
        "正在计算另外三个种子，检查结论是否对它们同样成立…",
    ),
    "caption.grad_profile": (
        "The measured ratios appear here once the model has run.",
        "模型运行完成后，这里显示实测的比值。",
    ),
    # /compare
    "compare.title": ("Side by side: Pre-LN vs Post-LN and friends", "并排对比：Pre-LN、Post-LN 及其他"),
    "compare.intro": (
        "The same sizes, seed and number format for every variant; the panels share their axes, so heights can be "
        "compared directly. A preset fixes its own architecture: the architecture settings below change only the "
        "\u201cCustom\u201d variant, or one variant through its \u201cchanges\u201d box.",
        "每个变体的尺寸、随机种子和数值格式都相同；面板共用坐标轴，高度可以直接比较。预设自带架构：下方的架构设置"
        "只作用于\u201c自定义\u201d变体，或者通过某个变体的\u201c改动\u201d框修改它。",
    ),
    "compare.custom": ("Custom (the settings below)", "自定义（下方设置）"),
}


def strings() -> dict[str, tuple[str, str]]:
    return STRINGS


def home_requests() -> list[Part]:
    return [("tour", TourRequest(depth=HOME["depth"]))]


def norms_requests() -> list[Part]:
    return [("trace", TraceConfig())]


def gradients_requests() -> list[Part]:
    """The default and its counterpart without the residual on the seeds of the band (app/figures/gradients.py),
    and the default sweep."""
    base = TraceConfig(**{k: v for k, v in GRADIENTS.items() if k in TraceConfig.model_fields})
    sweep = SweepRequest(config=base, depths=list(range(1, (GRADIENTS["sweep_to"] or base.depth) + 1)))
    return [("grad_profile", GradProfile(config=base, seeds=BAND)), ("sweep", sweep)]


def compare_requests() -> list[Part]:
    """Every preset: the default pair and each other variant one click away (the presets menu of every page)."""
    return [("trace", preset_config(key)) for key in PRESETS]


def pages() -> list[Page]:
    return [
        Page(
            "home",
            "/",
            "home.title",
            charts=("tour",),
            template="index.html",
            nav_key="nav.home",
            nav_order=0,
            model_controls=False,
            defaults=HOME,
            default_requests=home_requests,
        ),
        Page(
            "norms",
            "/norms",
            "norms.title",
            charts=("norms",),
            nav_key="nav.norms",
            nav_order=10,
            url_keys=("norm_scale",),
            default_requests=norms_requests,
        ),
        Page(
            "gradients",
            "/gradients",
            "gradients.title",
            charts=("grad-profile", "grad-heatmap"),
            nav_key="nav.gradients",
            nav_order=20,
            url_keys=("sweep_to", "heat", "grad_scale"),
            defaults=GRADIENTS,
            default_requests=gradients_requests,
        ),
        Page(
            "compare",
            "/compare",
            "compare.title",
            charts=("compare",),
            nav_key="nav.compare",
            nav_order=30,
            url_keys=("variants", "changes_1", "changes_2", "changes_3", "changes_4"),
            defaults=COMPARE,
            default_requests=compare_requests,
        ),
    ]
