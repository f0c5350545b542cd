"""Every user-visible word, in English and Chinese (zh-CN): the shared words here (`STRINGS`), each other module's
own words in its own `STRINGS` table (e.g. app/pages/explorer.py), never added to this one on import.

`merge` joins the shared words and the tables of the modules that own the rest, checking each key is owned once and
carries both languages; app/pages/registry.py's `collect()` builds the pages' table so, and `use` makes it the one
`t(key, lang)` and `client_table(lang)` read (the browser gets the whole table for its language as one shared file,
`client_script`, served at /i18n/<version>/strings.<lang>.js, so chart titles, axis labels and captions are
translated in the same place). Until then they read the shared words alone: a module below
the pages (a chart, the notebook) looks its own words up in its own table and falls back to `t` for the shared ones.
Model field labels and help live in app/config/request.py (TraceConfig), preset names in PRESETS.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

LANGS = ("en", "zh")

# key: (English, 中文). {name} placeholders are filled by t(..., name=value) or by the browser.
STRINGS: dict[str, tuple[str, str]] = {
    "app.name": ("ResNorm Explorer", "ResNorm 探索器"),
    "app.tagline": (
        "Why deep Transformers need residual connections and normalization",
        "为什么深层 Transformer 需要残差连接和归一化",
    ),
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
    # A footer says where its page's numbers are computed: {where} is this server, or for a static copy of the site
    # the time it was built or the server it asks (app/pages/static_pages.py).
    "footer.offline": (
        "Every number on this page comes from a real PyTorch forward and backward pass {where}.",
        "本页每个数字都来自 PyTorch {where}进行的真实前向和反向计算。",
    ),
    "footer.where.server": ("on this server", "在本服务器上"),
    "footer.api": ("JSON API", "JSON 接口"),
    # Show the room: this page's address as a QR code for the phones in the room (templates/_room.html, room.js)
    "room.open": ("QR code", "二维码"),
    "room.open_title": (
        "Show this page's link, with its settings, as a large QR code for phones in the room",
        "把本页链接（含当前设置）显示为大号二维码，供教室里的手机扫描",
    ),
    "room.title": ("Scan to open this page", "扫码打开本页"),
    "room.close": ("Close", "关闭"),
    "room.qr_alt": ("QR code of {url}", "{url} 的二维码"),
    "room.loading": ("Asking the server for its address…", "正在向服务器查询地址…"),
    "room.kept": ("The link keeps every setting of this page.", "链接保留了本页的全部设置。"),
    "room.lan": (
        "This computer's address on the local network: phones must be on the same network (Wi-Fi).",
        "这是本机在局域网中的地址：手机需要连在同一个网络（Wi-Fi）上。",
    ),
    "room.public": ("The public address set by RESNORM_PUBLIC_URL.", "由 RESNORM_PUBLIC_URL 设置的公开地址。"),
    "room.other": (
        "Other addresses of this computer (if the code does not work):",
        "本机的其他地址（二维码打不开时可以试试）：",
    ),
    "room.loopback": (
        "Phones cannot open this link: the server listens on this computer only (127.0.0.1). "
        "Restart it like this, on a network the phones share:",
        "手机打不开这个链接：服务器只在本机（127.0.0.1）上监听。请这样重新启动，并让手机连到同一个网络：",
    ),
    "room.or": ("or", "或"),
    "room.container": (
        "This server runs in a container and cannot see the host's address: set RESNORM_PUBLIC_URL to the "
        "address phones should open (for example http://192.168.1.20:8000).",
        "本服务器运行在容器中，看不到宿主机的地址：请把 RESNORM_PUBLIC_URL 设为手机应打开的地址"
        "（例如 http://192.168.1.20:8000）。",
    ),
    "room.no_address": (
        "The server found no network address: connect this computer to the room's network, or set RESNORM_PUBLIC_URL.",
        "服务器没有找到网络地址：请把本机连到教室的网络，或设置 RESNORM_PUBLIC_URL。",
    ),
    "room.unknown": (
        "Could not ask the server for its address: this is the address this page was opened with.",
        "无法向服务器查询地址：这是打开本页时使用的地址。",
    ),
    "room.too_long": (
        "This link is too long for a QR code: hide some settings or reset them.",
        "链接太长，无法生成二维码：请隐藏或重置部分设置。",
    ),
    # Follow the lecturer: the room panel's follow block and the follower's status bar (static/js/lecture/follow.js)
    "follow.start": ("Let phones follow my slides", "让手机跟随我的幻灯片"),
    "follow.stop": ("Stop: link to this slide only", "停止跟随：只链接到本页"),
    "follow.key": (
        "Phones that open this link show the slide you show. Presenter key (on this screen only, not in the "
        "link): {key}",
        "打开此链接的手机会显示您正在放映的幻灯片。演讲者密钥（只在此屏幕上，不在链接中）：{key}",
    ),
    "follow.connecting": ("Connecting to the lecturer…", "正在连接演讲者…"),
    "follow.following": ("Following the lecturer · slide {n}", "正在跟随演讲者 · 第 {n} 页"),
    "follow.reconnecting": ("Connection lost; reconnecting…", "连接中断，正在重新连接…"),
    "follow.ended": (
        "This follow session no longer exists (sessions last a day): ask for the link again.",
        "此跟随会话已不存在（会话保留一天）：请重新获取链接。",
    ),
    "follow.leave": ("Stop following", "停止跟随"),
    # Controls
    "controls.heading": ("Settings", "设置"),
    "controls.preset": ("Preset", "预设"),
    "controls.preset_help": (
        "Pick a well-known architecture; the settings below follow it.",
        "选择一种常见架构，下方设置会随之改变。",
    ),
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
    "controls.sweep_to": ("Sweep depths 1 to (0 = this model's depth)", "扫描深度 1 到（0 = 本模型的深度）"),
    "controls.variants": ("Variants to compare (2 to 4)", "对比的变体（2 到 4 个）"),
    "controls.variant_n": ("Variant {n}", "变体 {n}"),
    "controls.variant_none": ("(none)", "（无）"),
    "controls.variant_changes": ("Variant {n}: changes", "变体 {n}：改动"),
    "controls.variant_changes_help": (
        "Settings that differ for this variant only, as field:value pairs separated by commas, "
        "e.g. dtype:float16, norm:rmsnorm (field names as in the URL).",
        "仅对该变体生效的设置，用逗号分隔的 字段:值 对，例如 dtype:float16, norm:rmsnorm（字段名与网址中的相同）。",
    ),
    "controls.hidden_note": ("Some settings are hidden by this classroom link.", "此课堂链接隐藏了部分设置。"),
    "controls.classroom": ("Classroom link: hide settings", "课堂链接：隐藏设置"),
    "controls.classroom_help": (
        "Tick the settings students should not see, then copy the link.",
        "勾选学生不需要看到的设置，然后复制链接。",
    ),
    "controls.copy_link": ("Copy link", "复制链接"),
    "controls.copied": ("Copied.", "已复制。"),
    "controls.copy_failed": (
        "Copying was blocked: select the text and copy it by hand.",
        "复制被浏览器阻止：请选中文本手动复制。",
    ),
    "enum.theme.normal": ("Normal", "普通"),
    "enum.theme.slide": ("Slide (large, high contrast)", "幻灯片（大字、高对比度）"),
    "enum.yscale.log": ("Log", "对数"),
    "enum.yscale.linear": ("Linear", "线性"),
    "enum.heat.absolute": ("Absolute gradient", "梯度绝对值"),
    "enum.heat.relative": ("Relative to the last layer", "相对于最后一层"),
    "enum.arch.transformer": ("Transformer", "Transformer"),
    "enum.arch.mlp": ("MLP", "MLP（多层感知机）"),
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
    "status.network": ("Could not reach the server.", "无法连接到服务器。"),
    "status.busy": ("The server is busy; retrying in {s} s.", "服务器繁忙，{s} 秒后重试。"),
    # The compute budget (static/js/budget.js, from POST /api/budget): the setting to blame and what fits
    "budget.over": (
        "Too large for this server's compute budget: with the other sizes as they are, {setting} can be at most "
        "{max} (it is {value}).",
        "超出了本服务器的计算预算：在其他尺寸不变时，“{setting}”最大只能是 {max}（当前为 {value}）。",
    ),
    "budget.others": (" Or lower {others}.", "也可以改为：{others}。"),
    "budget.other": ("{setting} to {max}", "“{setting}”不超过 {max}"),
    "budget.list_sep": (", ", "、"),
    "budget.several": (
        "Too large for this server's compute budget, and no single size brings it within: lower two or more of "
        "{sizes}.",
        "超出了本服务器的计算预算，只调小一个尺寸不够：请同时调小以下两项或更多：{sizes}。",
    ),
    "budget.limit": (
        "{setting} can be at most {max} with the other sizes as they are (this server's compute budget); "
        "{value} was not applied.",
        "在其他尺寸不变时，“{setting}”最大只能是 {max}（本服务器的计算预算）；{value} 未被采用。",
    ),
    "status.invalid_url": (
        "Ignored values in the link that are not allowed: {names}.",
        "已忽略链接中不允许的值：{names}。",
    ),
    "status.invalid_item": ("{setting} = {value} (allowed: {range})", "“{setting}” = {value}（允许：{range}）"),
    # What a setting allows, in words (static/js/controls.js rangeText, from the request model's schema)
    "range.integer": ("a whole number", "整数"),
    "range.number": ("a number", "数"),
    "range.between": ("{kind} from {min} to {max}", "{min} 到 {max} 之间的{kind}"),
    "range.above_to": ("{kind} above {min}, at most {max}", "大于 {min}、不超过 {max} 的{kind}"),
    "range.at_least": ("{kind} of at least {min}", "不小于 {min} 的{kind}"),
    "range.above": ("{kind} above {min}", "大于 {min} 的{kind}"),
    "range.at_most": ("{kind} of at most {max}", "不超过 {max} 的{kind}"),
    "range.any": ("{kind}", "{kind}"),
    "range.list": (
        "{min} to {max} numbers separated by commas",
        "{min} 到 {max} 个数，用逗号分隔",
    ),
    "range.enum": ("one of {values}", "以下之一：{values}"),
    "range.items": ("{min} to {max} choices", "{min} 到 {max} 个选项"),
    "range.entry": ("entry {n} of {setting}", "{setting}的第 {n} 项"),
    "range.finite": ("a finite number", "有限的数"),
    # A value refused beside its field, the old one kept (static/js/controls.js)
    "controls.refused": (
        "{value} is not allowed here: {setting} takes {range}. Kept {old}.",
        "这里不能取 {value}：“{setting}”应为{range}。已保留 {old}。",
    ),
    "controls.refused_free": (
        "{value} is not allowed for {setting}. {help} Kept {old}.",
        "“{setting}”不能取 {value}。{help}已保留 {old}。",
    ),
    "controls.empty": ("(empty)", "（空）"),
    "controls.refused_blank": (
        "{setting} needs {range}. Kept {old}.",
        "“{setting}”需要填写{range}。已保留 {old}。",
    ),
    "controls.adjusted": (
        "{setting} changed from {old} to {value}: with these settings it can be {range}.",
        "“{setting}”已从 {old} 改为 {value}：在当前设置下只能取{range}。",
    ),
    "status.refused": (
        "The server did not accept {setting}{input}: allowed {range}.",
        "服务器不接受“{setting}”{input}：允许{range}。",
    ),
    "status.busy_failed": (
        "The server stayed busy; change a setting or reload in a moment.",
        "服务器一直繁忙；请稍后修改设置或重新加载。",
    ),
    "status.server_failed": (
        "The server failed while computing (HTTP {status}{detail}); try again or change a setting.",
        "服务器计算时出错（HTTP {status}{detail}）；请重试或修改设置。",
    ),
    "status.refused_unknown": (
        "The server did not accept the request (HTTP {status}{detail}).",
        "服务器不接受这个请求（HTTP {status}{detail}）。",
    ),
    "status.sweep": ("Sweep: depth {done} of {total}", "扫描：第 {done} / {total} 个深度"),
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
    "export.embed_title": (
        "Copy an iframe snippet showing this chart with these settings",
        "复制一段 iframe 代码，用当前设置嵌入此图",
    ),
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
    "mark.underflowed": ("0 (underflow: too small for the number format)", "0（下溢：数值太小，当前数值格式无法表示）"),
    # What a ratio of gradients (or a product of factors) did over many layers: app/figures/gradients.verdict picks one
    "verdict.kept": ("kept (within ×10 of 1)", "基本保持（与 1 相差不到 10 倍）"),
    "verdict.faded": ("faded", "衰减"),
    "verdict.grew": ("grew", "增大"),
    "verdict.exploded": ("exploded", "爆炸"),
    "verdict.overflowed": ("overflowed to inf/NaN", "溢出为 inf/NaN"),
    "verdict.underflowed": ("underflowed to exactly 0", "下溢为 0"),
    "series.dtype_max": ("{dtype} limit {value}", "{dtype} 上限 {value}"),
    "mark.null_points": ("× = value overflowed", "× = 数值溢出"),
    "chart.norms.y": ("Mean token norm ‖x_l‖", "词元平均范数 ‖x_l‖"),
    "series.theory_post": ("Theory √d_model = {value}", "理论 √d_model = {value}"),
}


Table = Mapping[str, tuple[str, str]]


def merge(*tables: Table) -> dict[str, tuple[str, str]]:
    """The shared words and the given modules' tables as one table. A key owned twice, or without both languages,
    is refused."""
    merged: dict[str, tuple[str, str]] = dict(STRINGS)
    for table in tables:
        for key, pair in table.items():
            if key in merged:
                raise ValueError(f"i18n key owned twice: {key}")
            if len(pair) != 2 or not all(isinstance(s, str) and s for s in pair):
                raise ValueError(f"i18n key {key} needs a non-empty (English, Chinese) pair")
            merged[key] = (pair[0], pair[1])
    return merged


_table: Table = STRINGS  # what t() and client_table() read: the shared words until `use` is called


def use(table: Table) -> None:
    """Make `table` (a `merge` of the shared words and its owners' tables) the one `t` and `client_table` read."""
    global _table
    _table = table


def table() -> Table:
    """The table `t` reads now."""
    return _table


def t(key: str, lang: str = "en", **values: object) -> str:
    """The string for key in lang ('en' or 'zh'), with {placeholders} filled. Unknown keys show as the key."""
    return lookup(_table, key, lang, **values)


def lookup(strings: Table, key: str, lang: str = "en", **values: object) -> str:
    """The string for key in lang from `strings`, else from the shared words, else the key itself."""
    pair = strings.get(key) or STRINGS.get(key)
    if pair is None:
        return key
    text = pair[1] if lang == "zh" else pair[0]
    return text.format(**values) if values else text


def client_table(lang: str) -> dict[str, str]:
    """The whole table in one language, for the browser (about 70 kB; 15 kB gzipped)."""
    index = 1 if lang == "zh" else 0
    return {key: pair[index] for key, pair in _table.items()}


def client_script(lang: str) -> str:
    """The table as a classic script, `window.RESNORM_STRINGS = {...}`: one file per language that every page and
    embed shares (the browser keeps it; a static site writes it once) instead of 70 kB inside each page's HTML.
    Classic, so it also runs from file://."""
    table = json.dumps(client_table(lang), ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return f"window.RESNORM_STRINGS = {table};\n"


def client_version() -> str:
    """A digest of the table `t` reads, for the strings file's URL: new words, a new URL (cached as immutable).
    Computed once per table (`use` sets a new one)."""
    if _version[0] is not _table:
        text = json.dumps(_table, ensure_ascii=False, sort_keys=True)
        _version[:] = [_table, hashlib.sha256(text.encode()).hexdigest()[:12]]
    return str(_version[1])


_version: list[object] = [None, ""]  # (the table, its digest)


def pick_lang(query_lang: str | None, accept_language: str | None, default: str = "en") -> str:
    """?lang= wins, then the browser's Accept-Language (by q-value), then the server default."""
    chosen = _lang_of(query_lang or "")
    if chosen:
        return chosen
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
        if _lang_of(code):
            return _lang_of(code)
    return default if default in LANGS else "en"


def _lang_of(code: str) -> str:
    """'zh' for any Chinese tag (zh, zh-CN, zh-Hans-TW), 'en' for any English one, else ''."""
    code = code.strip().lower()
    return next((lang for lang in LANGS if code.startswith(lang)), "")
