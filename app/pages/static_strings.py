"""The words of a static copy of the site (app/pages/static_pages.py): its build line, licence, footers and the
notices of pages or views it does not carry. The registry collects them with every page's words."""

from __future__ import annotations

STRINGS: dict[str, tuple[str, str]] = {
    "static.not_baked": (
        "This view is not in this static copy of the lesson.",
        "这个视图不在本课程的静态副本中。",
    ),
    "static.nearest": ("Nearest baked views:", "最接近的已预先计算的视图："),
    "static.end": (".", "。"),
    "static.default_view": ("The page's default view", "本页默认视图"),
    "static.needs_server": (
        "This page needs the explorer's server (resnorm-explorer serve): a static copy cannot run models or training.",
        "本页需要探索器的服务器（resnorm-explorer serve）：静态副本无法运行模型或训练。",
    ),
    "static.built": (
        "Static copy built by ResNorm Explorer {version} on {when}; every number was computed by PyTorch then.",
        "静态副本由 ResNorm Explorer {version} 于 {when} 生成；每个数字都是当时由 PyTorch 计算的。",
    ),
    "static.models_data": (
        "The charts of this page are measurements of the pretrained models named above, recorded when the copy was "
        "built; the models' weights and their licences are described on each model's card.",
        "本页图表是对上面所列预训练模型的测量，在生成副本时记录；模型权重及其许可证见各模型的说明页（model card）。",
    ),
    "static.models_data_short": (
        "The real models' charts are measurements of pretrained models, recorded when this copy was built; each "
        "model's weights and licence are described on its model card.",
        "真实模型的图表是对预训练模型的测量，在生成本副本时记录；各模型的权重及许可证见其说明页（model card）。",
    ),
    "static.models_licences": ("Licences of the models measured: {licences}.", "所测模型的许可证：{licences}。"),
    "static.built_pages": (
        "Pages built by ResNorm Explorer {version} on {when}.",
        "页面由 ResNorm Explorer {version} 于 {when} 生成。",
    ),
    "static.mixed_content": (
        "This page was opened over https but its server, {server}, is http: browsers refuse that (mixed content). "
        "Serve the API over https, or open this copy over http.",
        "本页通过 https 打开，但它的服务器 {server} 是 http：浏览器会拒绝这种请求（混合内容）。"
        "请让接口通过 https 提供，或通过 http 打开本副本。",
    ),
    "static.train_intro": (
        "Short real training runs, recorded when this copy was built, side by side on the same data: a small "
        "Transformer learns to copy (or reverse, or sort) a sequence. Pick a preset to see its loss curves and "
        "per-layer gradients as they were recorded; other settings need the explorer's server.",
        "在生成本副本时录制的简短真实训练，多个模型在同样的数据上并排训练：一个小 Transformer 学习复制（或反转、排序）"
        "一个序列。选择一个预设，查看录制下来的损失曲线和逐层梯度；其他设置需要探索器的服务器。",
    ),
    "static.models_intro": (
        "Two real pretrained models read these sentences, offline, when this copy was built. MiniLM is a BERT: "
        "Post-LN, so every block's output is a LayerNorm output, whose norm its learned gain sets (the caption says "
        "whether the tokens end pinned together). SmolLM2 is a Llama: pre-norm, so nothing normalises the residual "
        "stream and it snowballs from block to block, while the first token carries a massive activation. Every "
        "claim is also checked on a built-in set of sixteen sentences; another sentence needs the explorer's server.",
        "两个真实的预训练模型在生成本副本时离线读取了这些句子。MiniLM 属于 BERT 家族：Post-LN，每个块的输出都是 LayerNorm "
        "的输出，其范数由学到的增益决定（图注说明各词元是否被固定在一起）。SmolLM2 属于 Llama 家族：Pre-norm，"
        "残差流从不被归一化，逐块像滚雪球一样增长，而第一个词元携带巨大的激活值。每个结论还在内置的十六个句子上核对；"
        "其他句子需要探索器的服务器。",
    ),
    "static.train_recorded": (
        "Recorded when this copy was built ({seconds} s of training there); training anew needs the explorer's server.",
        "在生成本副本时录制（当时训练用时 {seconds} 秒）；重新训练需要探索器的服务器。",
    ),
    "static.html_export_file": (
        "The offline HTML file needs this copy served over http(s): a page opened from a file cannot read Plotly.js. "
        "PNG, SVG, JSON and CSV work here.",
        "离线 HTML 文件需要通过 http(s) 打开本副本：从文件打开的页面无法读取 Plotly.js。PNG、SVG、JSON 和 CSV 在这里可用。",
    ),
    "footer.where.static": ("when this static copy was built", "在生成本静态副本时"),
    "footer.where.remote": ("on the explorer's server at {server}", "在探索器服务器 {server} 上"),
    "static.licence": (
        "Charts drawn with plotly.js {plotly} (MIT licence, © Plotly, Inc.: assets/LICENSE.plotly.js.txt).",
        "图表由 plotly.js {plotly} 绘制（MIT 许可证，© Plotly, Inc.：assets/LICENSE.plotly.js.txt）。",
    ),
}
