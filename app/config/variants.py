"""The variant table: every value of the architectural axes (norm, norm position, residual, block) once, with its
labels in both languages, its help and its physical properties.

The request model's `Literal`s (app/config/request.py), the controls' option labels (`enum.<axis>.<key>`,
`enum_strings`), the `norm` field's help, the pages' theory lines (`variants_payload`, handed to every page) and the
docs' variant table are derived from here. The classes live one layer down, in the models' registries (`NORMS`,
`UNITS`, `RESIDUALS`, `BLOCKS`): this table never imports them, and tests/test_variant_table.py fails when a key is
missing on either side, from the docs, or when a physical property does not hold for the real class.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Variant:
    key: str
    label: str  # the option's label in the controls
    label_zh: str
    help: str = ""  # its clause in the field's help, after its name: "ScaleNorm (g·x/‖x‖)"
    help_zh: str = ""
    name: str = ""  # how the field's help names it (default: the label)
    name_zh: str = ""
    paper: str = ""  # where its equation comes from: author, year, equation
    # Physics the pages draw. pins_token: as the last operation of a unit (Post-LN) it rescales every token vector
    # to length √d_model, so /norms and the tour draw the √d line (tests/test_models.py checks each norm).
    pins_token: bool = False


NORM_VARIANTS: tuple[Variant, ...] = (
    Variant("layernorm", "LayerNorm", "LayerNorm", paper="Ba, Kiros & Hinton 2016, eq. 3-4", pins_token=True),
    Variant(
        "layernorm_nobias",
        "LayerNorm without bias (PaLM)",
        "无偏置 LayerNorm（PaLM）",
        "γ·(x − μ)/σ, no β",
        "γ·(x − μ)/σ，无 β",
        name="LayerNorm without bias",
        name_zh="无偏置 LayerNorm",
        paper="Chowdhery et al. 2022 (PaLM), section 2: no biases in dense kernels or layer norms",
        pins_token=True,
    ),
    Variant("rmsnorm", "RMSNorm", "RMSNorm", paper="Zhang & Sennrich 2019, eq. 4", pins_token=True),
    Variant(
        "scalenorm",
        "ScaleNorm",
        "ScaleNorm",
        "g·x/‖x‖",
        "g·x/‖x‖",
        paper="Nguyen & Salazar 2019, eq. 3",
        pins_token=True,
    ),
    Variant(
        "dyt",
        "DyT (dynamic tanh)",
        "DyT（动态 tanh）",
        "γ·tanh(αx)+β",
        "γ·tanh(αx)+β",
        name="DyT",
        name_zh="DyT",
        paper="Zhu et al. 2025, eq. 1",
    ),
    Variant(
        "batchnorm",
        "BatchNorm",
        "BatchNorm",
        "statistics per channel over the batch and every position; a trace uses the batch's own, as training does",
        "每个通道在整批和所有位置上求统计量；追踪时与训练一样使用本批的统计量",
        paper="Ioffe & Szegedy 2015, Algorithm 1",
    ),
    Variant(
        "groupnorm",
        "GroupNorm",
        "GroupNorm",
        "per token, over groups of channels",
        "每个词元内按通道分组",
        paper="Wu & He 2018, eq. 1-3",
        pins_token=True,
    ),
    Variant("none", "none", "无", name="none", name_zh="不使用"),
)

POSITION_VARIANTS: tuple[Variant, ...] = (
    Variant("pre", "pre (Pre-LN)", "前置（Pre-LN）"),
    Variant("post", "post (Post-LN)", "后置（Post-LN）"),
    Variant("sandwich", "sandwich (Peri-LN)", "Sandwich（Peri-LN）"),
    Variant("mix", "mix (Mix-LN)", "混合（Mix-LN）"),
)

RESIDUAL_VARIANTS: tuple[Variant, ...] = (
    Variant("identity", "identity shortcut", "恒等捷径"),
    Variant("none", "none (plain stack)", "无（普通堆叠）"),
    Variant("rezero", "ReZero", "ReZero"),
    Variant("highway", "highway (gated)", "Highway（门控捷径）"),
    Variant("dense", "dense (DenseFormer)", "稠密连接（DenseFormer）"),
)

BLOCK_VARIANTS: tuple[Variant, ...] = (
    Variant("sequential", "sequential", "串行"),
    Variant("parallel", "parallel (GPT-J)", "并行（GPT-J）"),
)

VARIANTS: dict[str, dict[str, Variant]] = {
    axis: {v.key: v for v in table}
    for axis, table in (
        ("norm", NORM_VARIANTS),
        ("norm_position", POSITION_VARIANTS),
        ("residual", RESIDUAL_VARIANTS),
        ("block", BLOCK_VARIANTS),
    )
}


def keys(axis: str) -> tuple[str, ...]:
    """The allowed values of an axis, in table order (the request model's Literal)."""
    return tuple(VARIANTS[axis])


def enum_strings() -> dict[str, tuple[str, str]]:
    """`enum.<axis>.<key>`: (English, 中文) option labels, for the pages' table (app/pages/registry.py collects it)."""
    return {f"enum.{axis}.{v.key}": (v.label, v.label_zh) for axis, table in VARIANTS.items() for v in table.values()}


def listed_help(axis: str, lead: str, lead_zh: str) -> tuple[str, str]:
    """A field's help naming every value: "lead A, B (clause) or C." and its Chinese twin."""
    items_en = [f"{v.name or v.label}{f' ({v.help})' if v.help else ''}" for v in VARIANTS[axis].values()]
    items_zh = [f"{v.name_zh or v.label_zh}{f'（{v.help_zh}）' if v.help_zh else ''}" for v in VARIANTS[axis].values()]
    return (
        f"{lead}{', '.join(items_en[:-1])} or {items_en[-1]}.",
        f"{lead_zh}{'、'.join(items_zh[:-1])}或{items_zh[-1]}。",
    )


def pinning_norms() -> list[str]:
    """The norms that pin every token to length sqrt(d) when they follow the add (`pins_token`): the pages draw the
    sqrt(d) line for these; tests/test_models.py checks on the real classes which pin and which do not."""
    return [key for key, variant in VARIANTS["norm"].items() if variant.pins_token]


def variants_payload() -> dict[str, dict[str, dict[str, Any]]]:
    """The table as JSON for the pages' scripts (e.g. `variants.norm[cfg.norm].pins_token` for the √d line)."""
    return {axis: {key: asdict(v) for key, v in table.items()} for axis, table in VARIANTS.items()}
