"""Where the blocks, the branches and the norms sit inside a Hugging Face Transformer, per family.

Three families are told apart by where the norm sits (Xiong et al. 2020, eq. 1-2):
- Post-LN (BERT, Devlin et al. 2019): x_{l+1} = LN(x_l + F(x_l)); every block's output is a LayerNorm output.
- Pre-norm (GPT-2, Llama): x_{l+1} = x_l + F(LN(x_l)); the stream is never normalised, only a final norm
  before the output head reads it.
- Peri-LN (Gemma 2 and 3; Kim et al. 2025 name it, Ding et al. 2021's "sandwich" norm): x_{l+1} =
  x_l + N_out(F(N_in(x_l))), four norms a block (before and after attention, before and after the MLP). The stream
  is not normalised either, but what each branch adds is: its contribution is the output norm's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from torch import nn

Family = Literal["post_ln", "pre_norm", "peri_ln"]
POST_LN_TYPES = ("bert", "roberta", "xlm-roberta", "electra", "camembert")
PERI_LN_TYPES = ("gemma2", "gemma3", "gemma3_text")


@dataclass
class Branches:
    """One block: the modules whose outputs are its attention and MLP contributions, and (Post-LN) its two norms."""

    block: nn.Module
    attention: nn.Module
    mlp: nn.Module
    norms: tuple[nn.Module, ...] = ()  # Post-LN: the LayerNorms after each residual sum, in order


@dataclass
class Layout:
    family: Family
    embeddings: nn.Module | None  # Post-LN: its output is the stream before block 1
    blocks: list[Branches] = field(default_factory=list)
    final_norm: nn.Module | None = None  # pre-norm: the norm between the last block and the head


class UnsupportedModel(ValueError):
    """A model whose blocks this explorer cannot find."""


def _first(module: nn.Module, names: tuple[str, ...]) -> nn.Module | None:
    return next((getattr(module, n) for n in names if isinstance(getattr(module, n, None), nn.Module)), None)


def find_layout(model: nn.Module, model_type: str) -> Layout:
    base: Any = getattr(model, "base_model", model)
    if model_type in POST_LN_TYPES:
        return Layout(
            "post_ln",
            base.embeddings,
            [
                Branches(
                    b,
                    b.attention.output.dense,
                    b.output.dense,
                    (b.attention.output.LayerNorm, b.output.LayerNorm),
                )
                for b in base.encoder.layer
            ],
        )
    blocks = _first(base, ("layers", "h", "blocks"))
    if not isinstance(blocks, nn.ModuleList) or len(blocks) == 0:
        raise UnsupportedModel(
            f"no list of blocks found in a {model_type} model: looked for a non-empty nn.ModuleList named layers, h "
            f"or blocks on {type(base).__name__} (BERT-like types {', '.join(POST_LN_TYPES)}: encoder.layer)"
        )
    if model_type in PERI_LN_TYPES:
        return _peri_ln(base, blocks, model_type)
    found = []
    for block in blocks:
        attention, mlp = _first(block, ("self_attn", "attn", "attention")), _first(block, ("mlp", "feed_forward"))
        if attention is None or mlp is None:
            raise UnsupportedModel(
                f"no attention or MLP branch found in a {model_type} block ({type(block).__name__}): looked for "
                "self_attn, attn or attention, and mlp or feed_forward"
            )
        found.append(Branches(block, attention, mlp))
    return Layout("pre_norm", None, found, _first(base, ("norm", "ln_f", "final_layernorm")))


def _peri_ln(base: Any, blocks: nn.ModuleList, model_type: str) -> Layout:
    """Gemma's blocks: each branch's contribution is the output of its own closing norm."""
    names = ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm")
    found = []
    for block in blocks:
        norms = {name: getattr(block, name, None) for name in names}
        after_attention, after_mlp = norms["post_attention_layernorm"], norms["post_feedforward_layernorm"]
        if not all(isinstance(norm, nn.Module) for norm in norms.values()):
            raise UnsupportedModel(f"a {model_type} block without the four norms {', '.join(names)}")
        assert isinstance(after_attention, nn.Module) and isinstance(after_mlp, nn.Module)
        found.append(Branches(block, after_attention, after_mlp))
    return Layout("peri_ln", None, found, _first(base, ("norm", "final_layernorm")))
