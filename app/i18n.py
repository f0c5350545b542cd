"""Every user-visible word of the pages, in English and Chinese (zh-CN), in one table.

Pages look strings up with `t(key, lang)`; the browser gets the whole table for its language
(`client_table`) so chart titles, axis labels and captions are translated in the same place.
Other modules add their own strings with `register({...})` instead of editing this table
(see docs/adding-a-page.md); a key may be registered only once.
Model field labels and help live in app/config/request.py (TraceConfig), preset names in PRESETS.
"""
from __future__ import annotations

from typing import Mapping

LANGS = ("en", "zh")

# key: (English, 中文). {name} placeholders are filled by t(..., name=value) or by the browser.
STRINGS: dict[str, tuple[str, str]] = {
    "app.name": ("ResNorm Explorer", "ResNorm 探索器"),
    "app.tagline": ("Why deep Transformers need residual connections and normalization",
                    "为什么深层 Transformer 需要残差连接和归一化"),
    "nav.label": ("Pages", "页面"),
    "nav.skip": ("Skip to content", "跳到正文"),
    "nav.home": ("Tour", "导览"),
    "nav.norms": ("Norms", "范数"),
    "nav.gradients": ("Gradients", "梯度"),
    "nav.compare": ("Compare", "对比"),
    "nav.menu": ("Menu", "菜单"),
    "lang.label": ("Language", "语言"),
    "lang.other": ("中文", "English"),
    "lang.other_code": ("zh", "en"),
    "footer.offline": ("Every number on this page comes from a real PyTorch forward and backward pass on this server.",
                       "本页每个数字都来自本服务器上真实的 PyTorch 前向和反向计算。"),
    "footer.api": ("JSON API", "JSON 接口"),
    # Show the room: this page's address as a QR code for the phones in the room (templates/_room.html, room.js)
    "room.open": ("QR code", "二维码"),
    "room.open_title": ("Show this page's link, with its settings, as a large QR code for phones in the room",
                        "把本页链接（含当前设置）显示为大号二维码，供教室里的手机扫描"),
    "room.title": ("Scan to open this page", "扫码打开本页"),
    "room.close": ("Close", "关闭"),
    "room.qr_alt": ("QR code of {url}", "{url} 的二维码"),
    "room.loading": ("Asking the server for its address…", "正在向服务器查询地址…"),
    "room.kept": ("The link keeps every setting of this page.", "链接保留了本页的全部设置。"),
    "room.lan": ("This computer's address on the local network: phones must be on the same network (Wi-Fi).",
                 "这是本机在局域网中的地址：手机需要连在同一个网络（Wi-Fi）上。"),
    "room.public": ("The public address set by RESNORM_PUBLIC_URL.", "由 RESNORM_PUBLIC_URL 设置的公开地址。"),
    "room.other": ("Other addresses of this computer (if the code does not work):", "本机的其他地址（二维码打不开时可以试试）："),
    "room.loopback": ("Phones cannot open this link: the server listens on this computer only (127.0.0.1). "
                      "Restart it like this, on a network the phones share:",
                      "手机打不开这个链接：服务器只在本机（127.0.0.1）上监听。请这样重新启动，并让手机连到同一个网络："),
    "room.or": ("or", "或"),
    "room.container": ("This server runs in a container and cannot see the host's address: set RESNORM_PUBLIC_URL to the "
                       "address phones should open (for example http://192.168.1.20:8000).",
                       "本服务器运行在容器中，看不到宿主机的地址：请把 RESNORM_PUBLIC_URL 设为手机应打开的地址"
                       "（例如 http://192.168.1.20:8000）。"),
    "room.no_address": ("The server found no network address: connect this computer to the room's network, "
                        "or set RESNORM_PUBLIC_URL.",
                        "服务器没有找到网络地址：请把本机连到教室的网络，或设置 RESNORM_PUBLIC_URL。"),
    "room.unknown": ("Could not ask the server for its address: this is the address this page was opened with.",
                     "无法向服务器查询地址：这是打开本页时使用的地址。"),
    "room.too_long": ("This link is too long for a QR code: hide some settings or reset them.",
                      "链接太长，无法生成二维码：请隐藏或重置部分设置。"),
    # Controls
    "controls.heading": ("Settings", "设置"),
    "controls.preset": ("Preset", "预设"),
    "controls.preset_help": ("Pick a well-known architecture; the settings below follow it.",
                             "选择一种常见架构，下方设置会随之改变。"),
    "controls.custom": ("Custom", "自定义"),
    "controls.reset": ("Reset to defaults", "恢复默认"),
    "controls.group.model": ("Model", "模型"),
    "controls.group.norm": ("Normalization", "归一化"),
    "controls.group.residual": ("Residual", "残差"),
    "controls.group.numerics": ("Numerics", "数值"),
    "controls.group.size": ("Sizes", "尺寸"),
    "controls.group.view": ("View", "显示"),
    "controls.group.page": ("This page", "本页"),
    "controls.theme": ("Chart theme", "图表主题"),
    "controls.yscale": ("Y axis", "纵轴"),
    "controls.norm_scale": ("Norm axis", "范数轴"),
    "controls.grad_scale": ("Gradient axis", "梯度轴"),
    "controls.heat": ("Heatmap colour", "热图颜色"),
    "controls.sweep_to": ("Sweep depths 1 to", "扫描深度 1 到"),
    "controls.variants": ("Variants to compare (2 to 4)", "对比的变体（2 到 4 个）"),
    "controls.variant_n": ("Variant {n}", "变体 {n}"),
    "controls.variant_none": ("(none)", "（无）"),
    "controls.variant_changes": ("Variant {n}: changes", "变体 {n}：改动"),
    "controls.variant_changes_help": ("Settings that differ for this variant only, as field:value pairs separated by commas, "
                                      "e.g. dtype:float16, norm:rmsnorm (field names as in the URL).",
                                      "仅对该变体生效的设置，用逗号分隔的 字段:值 对，例如 dtype:float16, norm:rmsnorm（字段名与网址中的相同）。"),
    "controls.hidden_note": ("Some settings are hidden by this classroom link.", "此课堂链接隐藏了部分设置。"),
    "controls.classroom": ("Classroom link: hide settings", "课堂链接：隐藏设置"),
    "controls.classroom_help": ("Tick the settings students should not see, then copy the link.",
                                "勾选学生不需要看到的设置，然后复制链接。"),
    "controls.copy_link": ("Copy link", "复制链接"),
    "controls.copied": ("Copied.", "已复制。"),
    "controls.copy_failed": ("Copying was blocked: select the text and copy it by hand.",
                             "复制被浏览器阻止：请选中文本手动复制。"),
    "enum.theme.normal": ("Normal", "普通"),
    "enum.theme.slide": ("Slide (large, high contrast)", "幻灯片（大字、高对比度）"),
    "enum.yscale.log": ("Log", "对数"),
    "enum.yscale.linear": ("Linear", "线性"),
    "enum.heat.absolute": ("Absolute gradient", "梯度绝对值"),
    "enum.heat.relative": ("Relative to the last layer", "相对于最后一层"),
    "enum.arch.transformer": ("Transformer", "Transformer"),
    "enum.arch.mlp": ("MLP", "MLP（多层感知机）"),
    "enum.norm.layernorm": ("LayerNorm", "LayerNorm"),
    "enum.norm.rmsnorm": ("RMSNorm", "RMSNorm"),
    "enum.norm.scalenorm": ("ScaleNorm", "ScaleNorm"),
    "enum.norm.dyt": ("DyT (dynamic tanh)", "DyT（动态 tanh）"),
    "enum.norm.batchnorm": ("BatchNorm", "BatchNorm"),
    "enum.norm.groupnorm": ("GroupNorm", "GroupNorm"),
    "enum.norm.none": ("none", "无"),
    "enum.norm_position.pre": ("pre (Pre-LN)", "前置（Pre-LN）"),
    "enum.norm_position.post": ("post (Post-LN)", "后置（Post-LN）"),
    "enum.norm_position.sandwich": ("sandwich (Peri-LN)", "三明治（Peri-LN）"),
    "enum.norm_position.mix": ("mix (Mix-LN)", "混合（Mix-LN）"),
    "enum.residual.identity": ("identity shortcut", "恒等捷径"),
    "enum.residual.none": ("none (plain stack)", "无（普通堆叠）"),
    "enum.residual.rezero": ("ReZero", "ReZero"),
    "enum.residual.highway": ("highway (gated)", "Highway（门控捷径）"),
    "enum.residual.dense": ("dense (DenseFormer)", "密集（DenseFormer）"),
    "enum.block.sequential": ("sequential", "串行"),
    "enum.block.parallel": ("parallel (GPT-J)", "并行（GPT-J）"),
    "enum.activation.gelu": ("GELU", "GELU"),
    "enum.activation.relu": ("ReLU", "ReLU"),
    "enum.activation.tanh": ("tanh", "tanh"),
    "enum.activation.sigmoid": ("sigmoid", "sigmoid"),
    "enum.init.xavier": ("Xavier", "Xavier"),
    "enum.init.gpt2": ("GPT-2", "GPT-2"),
    "enum.init.deepnorm": ("DeepNorm", "DeepNorm"),
    "enum.init.torch": ("PyTorch default", "PyTorch 默认"),
    "enum.dtype.float32": ("float32", "float32"),
    "enum.dtype.bfloat16": ("bfloat16", "bfloat16"),
    "enum.dtype.float16": ("float16", "float16"),
    # Status, errors, exports
    "status.loading": ("Computing…", "计算中…"),
    "status.ready": ("Ready.", "完成。"),
    "status.error": ("The server refused: {message}", "服务器拒绝了请求：{message}"),
    "status.network": ("Could not reach the server.", "无法连接服务器。"),
    "status.busy": ("The server is busy; retrying in {s} s.", "服务器繁忙，{s} 秒后重试。"),
    "status.invalid_url": ("Ignored invalid values in the link: {names}", "已忽略链接中的无效值：{names}"),
    "status.sweep": ("Sweep: depth {done} of {total}", "扫描：第 {done} / {total} 个深度"),
    "status.sweep_done": ("Sweep of {total} depths done in {seconds} s.", "{total} 个深度的扫描在 {seconds} 秒内完成。"),
    "export.label": ("Export this chart", "导出此图"),
    "export.png": ("PNG", "PNG"),
    "export.png_title": ("Download a 1920×1080 PNG for slides", "下载 1920×1080 的 PNG（用于幻灯片）"),
    "export.svg": ("SVG", "SVG"),
    "export.svg_title": ("Download a vector SVG", "下载矢量 SVG"),
    "export.html": ("HTML", "HTML"),
    "export.html_title": ("Download a standalone HTML file that works offline", "下载可离线打开的独立 HTML 文件"),
    "export.json": ("JSON", "JSON"),
    "export.json_title": ("Download the trace as JSON", "以 JSON 下载原始数据"),
    "export.csv": ("CSV", "CSV"),
    "export.csv_title": ("Download the trace as CSV", "以 CSV 下载原始数据"),
    "export.embed": ("Copy embed code", "复制嵌入代码"),
    "export.embed_title": ("Copy an iframe snippet showing this chart with these settings",
                           "复制一段 iframe 代码，用当前设置嵌入此图"),
    "export.embed_code": ("Embed code", "嵌入代码"),
    # Shared chart words
    "axis.layer": ("Layer l (0 = embedding)", "层 l（0 = 嵌入层）"),
    "axis.layer_plain": ("Layer l", "层 l"),
    "axis.depth": ("Network depth L (blocks)", "网络深度 L（块数）"),
    "series.fp16_max": ("float16 limit 65504", "float16 上限 65504"),
    "mark.overflow": ("overflow (inf/NaN) from layer {layer}", "从第 {layer} 层起溢出（inf/NaN）"),
    "mark.overflow_range": ("overflow (inf/NaN): layers {from}–{to}", "溢出（inf/NaN）：第 {from}–{to} 层"),
    "mark.overflow_at": ("overflow (inf/NaN) at layer {layer}", "第 {layer} 层溢出（inf/NaN）"),
    "mark.overflowed": ("inf/NaN (overflow)", "inf/NaN（溢出）"),
    "mark.underflowed": ("0 (underflow: too small for the number format)", "0（下溢：小到数值格式表示不了）"),
    "series.dtype_max": ("{dtype} limit {value}", "{dtype} 上限 {value}"),
    "mark.null_points": ("× = value overflowed", "× = 数值溢出"),
    # Tour (/)
    "home.title": ("A tour: residual connections and normalization", "导览：残差连接与归一化"),
    "home.lead": ("Every chart here is drawn from a real PyTorch model built on this server for the settings you choose.",
                  "这里的每张图都来自服务器按你的设置现场构建并运行的 PyTorch 模型。"),
    "home.residual_h": ("The residual connection", "残差连接"),
    "home.residual_p": ("A block computes y = x + f(x): the input x travels on unchanged beside the block. Backpropagation then "
                        "multiplies one factor (1 + f′) per layer instead of f′, so the gradient reaches the first layers even in a deep stack.",
                        "一个块计算 y = x + f(x)：输入 x 绕过该块原样向前传。反向传播时每层乘的因子是 (1 + f′) 而不是 f′，"
                        "所以即使网络很深，梯度也能到达最前面的层。"),
    "home.norm_h": ("The normalization layer", "归一化层"),
    "home.norm_p": ("LayerNorm rescales each token vector to mean 0 and variance 1. Where it sits decides what it controls: "
                    "after the add (Post-LN) it pins every vector to length √d; inside the branch (Pre-LN) the stream is left free to grow.",
                    "LayerNorm 把每个词元向量缩放到均值 0、方差 1。它放在哪里决定了它管住什么：放在相加之后（Post-LN）会把每个向量的长度固定为 √d；"
                    "放在分支内部（Pre-LN）则任由残差流增长。"),
    "home.pages_h": ("Explore", "开始探索"),
    "home.card.norms": ("The snowball: how the length of the residual stream grows layer by layer.",
                        "滚雪球：残差流的长度如何逐层增长。"),
    "home.card.gradients": ("How far the gradient survives, with and without the shortcut, at every depth.",
                            "有捷径和没有捷径时，梯度各能传多远；每种深度都算一遍。"),
    "home.card.compare": ("Pre-LN against Post-LN (or any 2 to 4 variants) in aligned panels.",
                          "Pre-LN 对比 Post-LN（或任选 2 到 4 种变体），各面板坐标对齐。"),
    "chart.tour.title": ("Stream norm per layer in a 24-block Transformer: Post-LN vs Pre-LN",
                         "24 块 Transformer 每层的残差流范数：Post-LN 对比 Pre-LN"),
    "caption.tour": ("Same sizes, initialisation and seed. Post-LN normalizes after every add, so each token vector has length √{d} = {value} at every layer. "
                     "Pre-LN adds each block's output to an unnormalized stream, which keeps getting longer.",
                     "尺寸、初始化和随机种子都相同。Post-LN 每次相加后都归一化，所以每层每个词元向量的长度都是 √{d} = {value}。"
                     "Pre-LN 把每个块的输出加到未归一化的残差流上，残差流越来越长。"),
    # /norms
    "norms.title": ("The snowball: activation norms along the residual stream", "滚雪球：残差流上的激活范数"),
    "norms.intro": ("The length of the token vectors after every block, averaged over tokens, for a freshly initialised model.",
                    "刚初始化的模型中，每个块之后词元向量的长度（对词元取平均）。"),
    "chart.norms.title": ("Activation norm along the residual stream", "残差流上的激活范数"),
    "chart.norms.y": ("Mean token norm ‖x_l‖", "词元平均范数 ‖x_l‖"),
    "series.act_norm": ("Residual stream ‖x_l‖", "残差流 ‖x_l‖"),
    "series.branch_norm": ("Block output ‖f(x)‖", "块输出 ‖f(x)‖"),
    "series.max_abs": ("Largest |entry| (what overflows)", "最大元素绝对值（决定是否溢出）"),
    "series.post_ln": ("Post-LN: N(x + f(x))", "Post-LN：N(x + f(x))"),
    "series.pre_ln": ("Pre-LN: x + f(N(x))", "Pre-LN：x + f(N(x))"),
    "series.theory_pre": ("Theory √(‖x₀‖² + c·l), c = {c} fitted", "理论 √(‖x₀‖² + c·l)，拟合 c = {c}"),
    "series.theory_post": ("Theory √d_model = {value}", "理论 √d_model = {value}"),
    "caption.norms.pre": ("Pre-LN: each block adds its output to the stream and nothing normalizes the sum, so the squared length grows "
                          "roughly linearly with depth and the length like √l (dashed: √(‖x₀‖² + c·l) with c fitted to this trace by least squares).",
                          "Pre-LN：每个块把输出加到残差流上，而相加的结果不做归一化，所以长度的平方大致随深度线性增长，长度约按 √l 增长"
                          "（虚线：√(‖x₀‖² + c·l)，c 由本次数据用最小二乘拟合）。"),
    "caption.norms.post": ("Post-LN: the norm comes after the add, so every token vector is rescaled to the same length √d_model at every layer "
                           "(dashed line). The stream cannot snowball, but see /gradients for what this costs the gradient.",
                           "Post-LN：归一化在相加之后，所以每层每个词元向量都被缩放到同样的长度 √d_model（虚线）。"
                           "残差流不会滚雪球，但梯度要为此付出代价，见“梯度”页。"),
    "caption.norms.other": ("The stream's length after each block. Switch the norm position to pre or post to see the two classic behaviours.",
                            "每个块之后残差流的长度。把归一化位置切换为 pre 或 post，可以看到两种典型行为。"),
    "caption.norms.growth": ("Measured: the stream's norm changed ×{growth} from layer 1 to layer {depth}.",
                             "实测：残差流范数从第 1 层到第 {depth} 层变为 {growth} 倍。"),
    "caption.norms.overflow": ("In {dtype} the values passed the largest finite number: from layer {layer} on they are inf or NaN (marked).",
                               "在 {dtype} 下数值超过了最大有限值：从第 {layer} 层起变成 inf 或 NaN（已标出）。"),
    # /gradients
    "gradients.title": ("How far does the gradient survive?", "梯度能传多远？"),
    "gradients.intro": ("The gradient of the loss with respect to the stream after each block, for one backward pass at initialisation.",
                        "初始化时一次反向传播中，损失对每个块之后残差流的梯度。"),
    "chart.grad_profile.title": ("Gradient per layer, with and without the residual", "每层的梯度：有残差与无残差"),
    "chart.grad_profile.y": ("Mean token gradient ‖∂loss/∂x_l‖", "词元平均梯度 ‖∂loss/∂x_l‖"),
    "series.with_residual": ("With residual ({residual})", "有残差（{residual}）"),
    "series.without_residual": ("Without residual (plain stack)", "无残差（普通堆叠）"),
    "caption.grad_profile": ("Read from right to left: the gradient starts at the last layer and travels back. Gradient at layer 1 ÷ "
                             "gradient at layer {depth}: {with_ratio} with the shortcut, {without_ratio} without it. Each plain layer "
                             "multiplies the gradient by its own derivative, so the product shrinks or explodes with depth; the shortcut adds 1 "
                             "to every factor.",
                             "从右往左读：梯度从最后一层出发往回传。第 1 层梯度 ÷ 第 {depth} 层梯度：有捷径时为 {with_ratio}，"
                             "没有捷径时为 {without_ratio}。普通堆叠的每一层都把梯度乘上自己的导数，乘积随深度缩小或爆炸；捷径给每个因子加上 1。"),
    "chart.grad_heatmap.title": ("Gradient reaching each layer, for every depth", "每个深度下到达各层的梯度"),
    "chart.grad_heatmap.colorbar": ("‖∂loss/∂x_l‖ (log)", "‖∂loss/∂x_l‖（对数）"),
    "chart.grad_heatmap.colorbar_rel": ("÷ last layer (log)", "÷ 最后一层（对数）"),
    "caption.grad_heatmap": ("One row per network depth L (this stack built with 1 to {max} blocks), one column per layer; log colour scale.",
                             "每一行是一个深度 L（同一结构分别用 1 到 {max} 个块构建），每一列是一层；颜色为对数刻度。"),
    "caption.grad_heatmap.relative": ("Each cell is that layer's gradient divided by the last layer's: white = the signal arrives intact, "
                                      "red = it faded on the way back (those layers would barely learn), blue = it grew.",
                                      "每格是该层梯度除以最后一层梯度：白色 = 信号完整到达，红色 = 回传途中衰减（这些层几乎学不到东西），蓝色 = 被放大。"),
    "caption.grad_heatmap.grey": ("Grey = that network has no such layer, or the value is not finite (inf/NaN).",
                                  "灰色 = 该网络没有这一层，或数值不是有限数（inf/NaN）。"),
    "caption.grad_heatmap.absolute": ("Each cell is the gradient's size itself: dark cells on the left of a row mean the first layers of that "
                                      "network get almost no signal.",
                                      "每格是梯度本身的大小：某一行左侧的深色格子表示该网络的前几层几乎收不到信号。"),
    # /compare
    "compare.title": ("Side by side: Pre-LN vs Post-LN and friends", "并排对比：Pre-LN、Post-LN 及其他"),
    "compare.intro": ("The same sizes, seed and number format for every variant; the panels share their axes, so heights can be "
                      "compared directly. A preset fixes its own architecture: the architecture settings below change only the "
                      "\u201cCustom\u201d variant, or one variant through its \u201cchanges\u201d box.",
                      "每个变体的尺寸、随机种子和数值格式都相同；面板共用坐标轴，高度可以直接比较。预设自带架构：下方的架构设置"
                      "只作用于\u201c自定义\u201d变体，或者通过某个变体的\u201c改动\u201d框修改它。"),
    "compare.custom": ("Custom (the settings below)", "自定义（下方设置）"),
    "chart.compare.title": ("Norms (top) and gradients (bottom), same axes", "范数（上）与梯度（下），坐标轴相同"),
    "chart.compare.y_norm": ("‖x_l‖", "‖x_l‖"),
    "chart.compare.y_grad": ("‖∂loss/∂x_l‖", "‖∂loss/∂x_l‖"),
    "caption.compare": ("Top row: how long the stream is after each layer. Bottom row: how much gradient each layer receives. "
                        "Post-LN pins every layer's norm at √d_model; Pre-LN lets the stream grow and passes the gradient back "
                        "through the shortcut. Measured here:",
                        "上排：每层之后残差流的长度。下排：每层收到的梯度大小。Post-LN 把每层的范数固定在 √d_model；"
                        "Pre-LN 任由残差流增长，梯度经捷径传回。本次测得："),
    "caption.compare.variant": ("{name}: stream ×{growth} from layer 1 to the last; layer 1 gets {survival}× the last layer's gradient.",
                                "{name}：残差流从第 1 层到最后一层变为 {growth} 倍；第 1 层收到的梯度是最后一层的 {survival} 倍。"),
    "caption.compare.cost": ("{name}: {params} parameters, {macs} multiply-adds a forward pass.",
                             "{name}：{params} 个参数，每次前向 {macs} 次乘加。"),
}


def register(table: Mapping[str, tuple[str, str]]) -> None:
    """Add strings owned by another module (a page, a lesson). Keys must be new and carry both languages."""
    for key, pair in table.items():
        if key in STRINGS:
            raise ValueError(f"i18n key registered twice: {key}")
        if len(pair) != 2 or not all(isinstance(s, str) and s for s in pair):
            raise ValueError(f"i18n key {key} needs a non-empty (English, Chinese) pair")
        STRINGS[key] = (pair[0], pair[1])


def t(key: str, lang: str = "en", **values: object) -> str:
    """The string for key in lang ('en' or 'zh'), with {placeholders} filled. Unknown keys show as the key."""
    pair = STRINGS.get(key)
    if pair is None:
        return key
    text = pair[1] if lang == "zh" else pair[0]
    return text.format(**values) if values else text


def client_table(lang: str) -> dict[str, str]:
    """The whole table in one language, for the browser (about 10 kB)."""
    index = 1 if lang == "zh" else 0
    return {key: pair[index] for key, pair in STRINGS.items()}


def pick_lang(query_lang: str | None, accept_language: str | None, default: str = "en") -> str:
    """?lang= wins, then the browser's Accept-Language (by q-value), then the server default."""
    for candidate in (query_lang,):
        if candidate:
            code = candidate.strip().lower()
            if code.startswith("zh"):
                return "zh"
            if code.startswith("en"):
                return "en"
    ranked = []
    for position, part in enumerate((accept_language or "").split(",")):
        code, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        ranked.append((-quality, position, code.strip().lower()))
    for _, _, code in sorted(ranked):
        if code.startswith("zh"):
            return "zh"
        if code.startswith("en"):
            return "en"
    return default if default in LANGS else "en"
