"""The /lecture page: its strings (English + Chinese, plus every slide chart's title for /embed/lecture-<id>) and its
page. The deck itself is data in app/experiments/lecture; its API and offline file are in app/api/lecture.py."""

from __future__ import annotations

from ..experiments.lecture import DECK, chart_key
from ..experiments.lecture.agenda import STRINGS as AGENDA_STRINGS
from ..services.deck import deck_requests
from .page import Page

STRINGS = {
    "nav.lecture": ("Lecture", "讲座"),
    "lecture.title": ("Lecture: residual connections and normalization", "讲座：残差连接与归一化"),
    "lecture.deck": ("slide deck", "幻灯片"),
    "lecture.slide": ("slide", "幻灯片"),
    "lecture.explorer": ("Open in explorer", "在探索器中打开"),
    "lecture.embed": ("Embed this chart", "嵌入此图"),
    "lecture.embed_unknown": (
        "This file has no chart slide called “{id}”. Its chart slides: {slides}.",
        "这个文件里没有名为“{id}”的图表页。它的图表页：{slides}。",
    ),
    "lecture.cites": ("Sources:", "来源："),
    "lecture.cites_more": ("and {count} more (References)", "等，另有 {count} 篇（见参考文献）"),
    "lecture.explorer_offline": (
        "Explorer: start the server (resnorm-explorer serve), then open {path}",
        "探索器：先启动服务器（resnorm-explorer serve），再打开 {path}",
    ),
    "lecture.train_start": ("▶ Train on this server (T)", "▶ 在本服务器上训练（T）"),
    "lecture.train_progress": ("Training progress", "训练进度"),
    "lecture.train_click": ("Click the chart to train on this server.", "点击图表，在本服务器上训练。"),
    "lecture.train_running": (
        "Training on this server: the measured losses appear here when every run has finished.",
        "正在本服务器上训练：所有训练结束后，这里会显示实测的损失。",
    ),
    "lecture.training": ("Training… step {step} of {steps}", "训练中…第 {step} / {steps} 步"),
    "lecture.train_busy": (
        "Another training run is using the server; retrying in {s} s.",
        "另一个训练正在使用服务器；{s} 秒后重试。",
    ),
    "lecture.train_incomplete": ("the training stream ended early", "训练数据流提前结束"),
    "lecture.train_done": ("Trained on this server; kept for this session.", "已在本服务器上训练；本次会话内保留。"),
    "lecture.recorded": ("Recorded on the server when this file was exported.", "导出本文件时在服务器上记录。"),
    "lecture.keys_hint": (
        "→ / Space next · ← back · F full screen · S speaker view · ? all keys",
        "→ / 空格 下一页 · ← 上一页 · F 全屏 · S 演讲者视图 · ? 全部按键",
    ),
    "lecture.touch_hint": (
        "Swipe left or right, or tap ‹ and ›, to change slides · QR: this deck's address for the room",
        "左右滑动，或点 ‹ 和 ›，切换幻灯片 · QR：给全场看的本课件地址",
    ),
    "lecture.touch_hint_offline": (  # the offline file has no QR button: the room's panel needs the server
        "Swipe left or right, or tap ‹ and ›, to change slides",
        "左右滑动，或点 ‹ 和 ›，切换幻灯片",
    ),
    "lecture.nav": ("Slides", "幻灯片切换"),
    "lecture.prev": ("Previous slide", "上一页"),
    "lecture.next": ("Next slide", "下一页"),
    "lecture.qr": ("Show this slide's address as a QR code for the room (Q)", "以 QR 二维码向全场展示本页地址（Q）"),
    "lecture.qa.why": ("Why", "为什么"),
    "lecture.qa.what": ("What", "是什么"),
    "lecture.qa.how": ("How", "怎么写"),
    "lecture.qa.cost": ("Cost", "代价"),
    "lecture.help.title": ("Presenting", "放映"),
    "lecture.help.keys": (
        "→, ↓, Space, Page Down, Enter: next slide. ←, ↑, Page Up, Backspace: previous. Home, End: first, "
        "last. F: full screen. S: speaker view (a second window: this and the next slide, the numbers to read out, "
        "notes, two clocks). "
        "T: train on a training slide. Q: this slide's address as a QR code for the room. ?: this help. Esc: close "
        "it. On a touch screen: swipe, or the ‹ QR › buttons. The address always names the slide: reload or share it.",
        "→、↓、空格、Page Down、回车：下一页。←、↑、Page Up、退格：上一页。Home、End：第一页、最后一页。"
        "F：全屏。S：演讲者视图（第二个窗口，显示本页和下一页、可照读的实测数字、备注和两个计时）。T：在训练页上开始训练。Q：以二维码向全场展示本页地址。"
        "?：本帮助。Esc：关闭。触屏上：左右滑动，或用 ‹ QR › 按钮。地址栏始终记着当前页：刷新或分享都会回到这一页。",
    ),
    "lecture.help.print": (
        "Print or save as PDF: one slide per landscape page.",
        "打印或另存为 PDF：每页横向一张幻灯片。",
    ),
    "lecture.download": ("Download the offline deck (one HTML file)", "下载离线课件（单个 HTML 文件）"),
    "lecture.follow_offline": (
        "The room's QR code and phones following the lecturer need the explorer's server (resnorm-explorer serve): "
        "this file presents the slides on its own.",
        "全场二维码和手机跟随讲者需要探索器的服务器（resnorm-explorer serve）：本文件只能独立放映幻灯片。",
    ),
    "lecture.speaker.title": ("Speaker view", "演讲者视图"),
    "lecture.speaker.notes": ("Notes", "备注"),
    "lecture.speaker.up_next": ("Next", "下一页"),
    "lecture.speaker.end": ("(end of the deck)", "（最后一页）"),
    "lecture.speaker.count": ("Slide {n} of {total}", "第 {n} / {total} 页"),
    "lecture.speaker.elapsed": ("Time since this view opened", "本视图打开以来的时间"),
    "lecture.speaker.reset": ("Reset clock", "重置计时"),
    "lecture.speaker.numbers": ("Measured on this slide (read out)", "本页实测数字（可照读）"),
    "lecture.speaker.on_slide": ("this slide", "本页"),
    "lecture.speaker.slide_elapsed": ("Time on this slide", "在本页停留的时间"),
    "lecture.speaker.no_numbers": ("(no measured numbers on this slide)", "（本页没有实测数字）"),
    "lecture.speaker.section": (
        "{section} · {minutes} min planned · slide {k} of {count} here",
        "{section} · 计划 {minutes} 分钟 · 本部分第 {k} / {count} 页",
    ),
    "lecture.reveal": ("Show the answer (→)", "显示答案（→）"),
    "lecture.try": ("Try it", "试一试"),
    "lecture.try_recorded": ("recorded with this file", "随本文件记录"),
    "lecture.try_entry": ("entry {n} of x", "x 的第 {n} 个分量"),
    "lecture.try_vector_offline": (
        ": only these values; typing your own numbers needs the server",
        "：只有这几组数值；输入自己的数需要服务器",
    ),
    "lecture.try_vector_refused": (
        "Not sent: type {length} numbers from {min} to {max}; the chart shows the last ones sent.",
        "未发送：请输入 {length} 个介于 {min} 和 {max} 之间的数；图中仍是上一次发送的数值。",
    ),
    "lecture.speaker.prev": ("← Previous", "← 上一页"),
    "lecture.speaker.next": ("Next →", "下一页 →"),
}


def chart_strings() -> dict[str, tuple[str, str]]:
    """chart.lecture_<id>.title for every slide chart: the /embed/ page's title and the chart's accessible name."""
    return {
        f"chart.{chart_key(s).replace('-', '_')}.title": (s["chart"]["title"]["en"], s["chart"]["title"]["zh"])
        for s in DECK
        if s["chart"]
    }


def strings() -> dict[str, tuple[str, str]]:
    return {**STRINGS, **AGENDA_STRINGS, **chart_strings()}


def pages() -> list[Page]:
    return [
        Page(
            key="lecture",
            path="/lecture",
            title_key="lecture.title",
            charts=tuple(chart_key(s) for s in DECK if s["chart"]),
            template="lecture.html",
            nav_key="nav.lecture",
            nav_order=5,
            model_controls=False,
            extra={"deck": DECK, "origin": ""},
            default_requests=deck_requests,  # every chart of the deck: any slide opens warm
        )
    ]
