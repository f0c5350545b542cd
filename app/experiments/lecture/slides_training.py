"""Training, recorded: Post-LN against Pre-LN over learning rate × warm-up (app/experiments/lr_warmup.py), trained
ahead of time by tools/lr_warmup_grid.py into checked-in data; the slide says so, and a test trains a cell again."""

from __future__ import annotations

import math

from ..lr_warmup import LRS
from . import sources as src
from .build import chart, check, claim, const, op, read, slide
from .reference import departs

LR = LRS.index(1e-3)  # the training slide's learning rate: its cells are that slide's runs
FAST = slice(LR, None)  # learning rates of 0.001 and up
POST, PRE = "grid.post_ln.final_loss", "grid.pre_ln_2017.final_loss"

LR_WARMUP = slide(
    "lr-warmup",
    ("Learning rate × warm-up, recorded", "学习率 × 预热：记录的结果"),
    (
        "Sixteen settings, trained ahead of time: each cell is the 12-block model of the previous slide after 300 "
        "steps. Warm-up rescues Post-LN only partly, and only at one learning rate; Pre-LN learns in every cell "
        "from 0.001 up.",
        "十六种设置，事先训练好：每一格都是上一页的 12 块模型训练 300 步之后的结果。预热只能部分地救回 Post-LN，"
        "而且只在一个学习率上有效；学习率从 0.001 起，Pre-LN 在每一格都学会了。",
    ),
    (
        "Recorded, not live: tools/lr_warmup_grid.py trained these 32 runs (about 5 minutes on two idle cores) and "
        "wrote their losses, its command, the torch and Python versions, the seeds and the date into "
        "app/experiments/lecture/data/lr_warmup.json; a test trains one cell again and compares. The cells at lr 0.001 "
        "with no and with 100 warm-up steps are the previous slide's runs. Too high a learning rate (0.003) and no "
        "warm-up saves Post-LN; too low (0.0001) and both barely move in 300 steps. Xiong et al. 2020 explain the "
        "need for warm-up by Post-LN's large gradients near the output; Goyal et al. 2017 introduced the linear ramp. "
        "Liu et al. 2020 report that a Post-LN model that does train can end better than Pre-LN: reported there, not "
        "measured here (300 steps are far from the end of training).",
        "记录的结果，不是现场计算：tools/lr_warmup_grid.py 训练了这 32 个模型（在两个空闲的核上约 5 分钟），把损失、命令、"
        "torch 和 Python 的版本、随机种子和日期写入 app/experiments/lecture/data/lr_warmup.json；有一个测试会重新训练"
        "其中一格并比较。学习率 0.001、不预热和预热 100 步的两格就是上一页的训练。学习率太高（0.003）时，预热也救不了 "
        "Post-LN；太低（0.0001）时，300 步里两者都几乎不动。Xiong 等 2020 用 Post-LN 靠近输出处的大梯度解释为什么需要预热；"
        "线性预热来自 Goyal 等 2017。Liu 等 2020 报告说，能训练起来的 Post-LN 模型最终可能比 Pre-LN 更好：这是该文的报告，"
        "不是这里的测量（300 步远没有训练完）。",
    ),
    chart(
        "lr_warmup",
        ("Loss after 300 steps (recorded)", "300 步后的损失（记录值）"),
        [src.recorded("lr_warmup")],
        src.train_link(["post_ln", "pre_ln_2017"], warmup_steps=100),
    ),
    claim(
        (
            "Recorded: at lr 0.001 Post-LN ends at {post_cold|3} without warm-up (a uniform guess: {uniform|3}) and "
            "{warm_low|3} to {warm_high|3} with it; at 0.003 no warm-up brings it below {hot_low|3}. Its best cell: "
            "{post_best|3}. Pre-LN from lr 0.001 up: {pre_high|2} at most.",
            "记录的结果：学习率 0.001 时，Post-LN 不预热停在 {post_cold|3}（均匀猜测为 {uniform|3}），预热后为 "
            "{warm_low|3} 到 {warm_high|3}；学习率 0.003 时，怎样预热都不低于 {hot_low|3}。它最好的一格是 "
            "{post_best|3}。学习率从 0.001 起，Pre-LN 至多为 {pre_high|2}。",
        ),
        {
            "uniform": const(math.log(15)),
            "post_cold": read(0, f"{POST}[0][{LR}]"),
            "warmed": read(0, f"{POST}[1:][{LR}]"),
            "warm_low": op("min", "warmed"),
            "warm_high": op("max", "warmed"),
            "hot": read(0, f"{POST}[*][{LR + 1}]"),
            "hot_low": op("min", "hot"),
            "post_best": read(0, "grid.post_ln.best.final_loss"),
            "pre_fast": read(0, f"{PRE}[*][{FAST.start}:]"),
            "pre_high": op("max", "pre_fast"),
            "post_all": read(0, "grid.post_ln.all"),
            "pre_all": read(0, "grid.pre_ln_2017.all"),
            "post_over_pre": op("ratio", ["post_all", "pre_all"]),
            "stall": op("ratio", ["post_cold", "uniform"]),
        },
        [
            check("stall", "between", [0.95, 1.02]),  # stays at the uniform guess, as the training slide shows
            check("warm_high", "<", math.log(15) - 0.5),  # every warm-up helps at 0.001 ...
            check("warm_low", ">", 1.0),  # ... partly
            check("hot", ">", 2.0),  # at 0.003 no warm-up rescues it
            check("pre_fast", "<", 0.05),  # Pre-LN learns in every cell from 0.001 up
            check("post_over_pre", ">", 1.0),  # and Post-LN ends above Pre-LN in every cell
        ],
    ),
    departs=departs(
        "the previous slide's 12-block model, trained ahead of time.",
        "上一页的 12 块模型，事先训练好。",
    ),
)

SLIDES = [LR_WARMUP]
