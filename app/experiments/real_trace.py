"""The residual stream of a real pretrained Transformer on one sentence: a plain function, loaded model -> numbers.

Read with forward hooks (app/probes/real.py): the stream before block 1 and after every block (before the
final norm), each block's attention and MLP contributions, and in a Post-LN model the sum before each LayerNorm
beside what the LayerNorm made of it. For a causal LM, the gradient of the next-token loss with respect to each
block's stream, per block and per token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from ..config.real import MAX_TOKENS
from ..models.real.loading import LoadedModel
from ..probes.real import StreamRecord, watch_stream
from .real_gradient import scaled
from .real_outliers import attention_sink, massive_activations

PINNED_SPREAD = 1.5  # "pinned": after the block's last norm, the largest / smallest text token norm is at most this


@dataclass(frozen=True)
class TraceOptions:
    gradients: bool = True  # causal models: the gradient of the next-token loss per block
    attention: bool = True  # attention weights (eager attention only) -> the mass on the first token
    special_tokens: bool = False  # typed "[MASK]" / "<|im_start|>" as the real special tokens; else plain text


class TooManyTokens(ValueError):
    def __init__(self, count: int, limit: int) -> None:
        super().__init__(f"the text is {count} tokens long; at most {limit}")
        self.count, self.limit = count, limit

    def __reduce__(self) -> tuple[type, tuple[int, int]]:  # raised in the models process, re-raised in the worker
        return type(self), (self.count, self.limit)


def encode(tokenizer: Any, text: str, special_tokens: bool = False) -> dict[str, torch.Tensor]:
    """The tokenizer's ids and character spans; special-token text typed by the user stays text unless asked."""
    encoded = tokenizer(text, return_tensors="pt", return_offsets_mapping=True, split_special_tokens=not special_tokens)
    return dict(encoded)


def tokenize(loaded: LoadedModel, text: str, options: TraceOptions, max_tokens: int = MAX_TOKENS) -> dict:
    encoded = encode(loaded.tokenizer, text, options.special_tokens)
    count = int(encoded["input_ids"].shape[1])
    if count > max_tokens:
        raise TooManyTokens(count, max_tokens)
    return encoded


def token_labels(loaded: LoadedModel, text: str, encoded: dict[str, torch.Tensor]) -> list[str]:
    """What each token covers in the text; special tokens by their own names ([CLS], [SEP]). Byte-level pieces of
    one character (SmolLM2 reads 残 as three bytes, three tokens) are labelled as pieces: "残 1/3", "残 2/3"."""
    names = loaded.tokenizer.convert_ids_to_tokens(encoded["input_ids"][0].tolist())
    spans = [tuple(span) for span in encoded["offset_mapping"][0].tolist()]
    labels = []
    for i, (name, (start, end)) in enumerate(zip(names, spans, strict=True)):
        if end <= start:
            labels.append(name)
            continue
        first = i
        while first > 0 and spans[first - 1] == spans[i]:
            first -= 1
        last = i
        while last + 1 < len(spans) and spans[last + 1] == spans[i]:
            last += 1
        piece = f" {i - first + 1}/{last - first + 1}" if last > first else ""
        labels.append(text[start:end] + piece)
    return labels


def token_kinds(loaded: LoadedModel, text: str, encoded: dict[str, torch.Tensor]) -> list[str]:
    """Per token: "special" (added by the tokenizer, as [CLS] and [SEP], or typed with special_tokens on),
    "unknown" (the vocabulary's [UNK] standing for typed text) or "text"."""
    tokenizer = loaded.tokenizer
    special, unk = set(tokenizer.all_special_ids), tokenizer.unk_token_id
    kinds = []
    for token, (start, end) in zip(
        encoded["input_ids"][0].tolist(), encoded["offset_mapping"][0].tolist(), strict=True
    ):
        typed = text[start:end]
        if unk is not None and token == unk and end > start and typed != tokenizer.unk_token:
            kinds.append("unknown")
        elif token in special:
            kinds.append("special")
        else:
            kinds.append("text")
    return kinds


def eager_attention(loaded: LoadedModel) -> bool:
    """Only eager attention computes its weights (sdpa returns none): the server loads models with it."""
    return getattr(loaded.model.config, "_attn_implementation", "eager") == "eager"


def run_watched(
    loaded: LoadedModel, encoded: dict[str, torch.Tensor], gradients: bool, attention: bool = False
) -> tuple[StreamRecord, Any]:
    """One forward pass with the stream recorded; gradients need the stream in the autograd graph, which starts
    at the input embeddings (the weights stay frozen)."""
    ids = encoded["input_ids"]
    embeds = loaded.model.get_input_embeddings()(ids).detach().requires_grad_(gradients)
    extra = {k: v for k, v in encoded.items() if k in ("attention_mask", "token_type_ids")}  # not the offsets
    weights = attention and eager_attention(loaded)
    with torch.set_grad_enabled(gradients), watch_stream(loaded.layout) as record:
        output = loaded.model(inputs_embeds=embeds, output_attentions=weights, **extra)
    return record, output


def next_token_gradients(record: StreamRecord, output: Any, ids: torch.Tensor) -> dict[str, Any]:
    """∂loss/∂x_l for every recorded stream x_l, loss = mean cross-entropy of each next token."""
    logits = output.logits[0]  # (T, vocab)
    loss = F.cross_entropy(logits[:-1], ids[0, 1:])
    return gradient_norms(loss.item(), torch.autograd.grad(loss, record.streams))


def gradient_norms(loss: float, grads: tuple[torch.Tensor, ...] | list[torch.Tensor]) -> dict[str, Any]:
    """The gradient's norms per block and per token, from ∂loss/∂x_l of one sentence, each (1, T, d)."""
    per_token = torch.stack([g[0].norm(dim=-1) for g in grads])  # (L+1, T)
    return {
        "loss": loss,
        "per_block": [float(g.norm()) for g in grads],  # ‖∂loss/∂x_l‖ over the whole sentence
        "per_token": per_token.tolist(),
    }


def mean_cosine(stream: torch.Tensor, skip_first: bool) -> float:
    """The mean cosine between different tokens' streams: 1 when every token points the same way."""
    x = stream[1:] if skip_first else stream
    if x.shape[0] < 2:
        return math.nan
    unit = F.normalize(x, dim=-1)
    cos = unit @ unit.T
    n = x.shape[0]
    return float((cos.sum() - cos.diagonal().sum()) / (n * (n - 1)))


def _means(norms: torch.Tensor) -> dict[str, list[float]]:
    """norms (layers, T) -> per layer: the mean over tokens, the mean without the first token, the first token."""
    rest = norms[:, 1:].mean(dim=1) if norms.shape[1] > 1 else torch.full(norms.shape[:1], math.nan)
    return {"mean": norms.mean(dim=1).tolist(), "mean_without_first": rest.tolist(), "first": norms[:, 0].tolist()}


def growth_fit(values: list[float]) -> dict[str, Any] | None:
    """Least-squares fits of log‖x_l‖ against l (geometric: ×r per block) and against log l (power law), l ≥ 1."""
    points = [(l, v) for l, v in enumerate(values) if l >= 1 and v > 0 and math.isfinite(v)]
    if len(points) < 3:
        return None
    layer = torch.tensor([p[0] for p in points], dtype=torch.float64)
    log_norm = torch.tensor([math.log(p[1]) for p in points], dtype=torch.float64)

    def fit(x: torch.Tensor) -> tuple[float, float, torch.Tensor]:
        design = torch.stack([x, torch.ones_like(x)], dim=1)
        coef = torch.linalg.lstsq(design, log_norm.unsqueeze(1)).solution.squeeze(1)
        residual = log_norm - design @ coef
        total = ((log_norm - log_norm.mean()) ** 2).sum()
        return float(coef[0]), float(1 - (residual**2).sum() / total), design @ coef

    slope, r2_geometric, fitted = fit(layer)
    exponent, r2_power, _ = fit(torch.log(layer))
    return {
        "layers": [p[0] for p in points],
        "fitted": torch.exp(fitted).tolist(),  # the geometric fit at those layers, to draw beside the measurement
        "per_block": math.exp(slope),
        "over_blocks": points[-1][1] / points[0][1],
        "per_block_endpoints": (points[-1][1] / points[0][1]) ** (1 / max(1, points[-1][0] - points[0][0])),
        "blocks": points[-1][0] - points[0][0],
        "r2_geometric": r2_geometric,
        "power_exponent": exponent,
        "r2_power": r2_power,
    }


def pinned_levels(loaded: LoadedModel) -> list[float]:
    """Post-LN: the norm each block's output LayerNorm sets, ‖γ⊙n + β‖ ≈ √Σ(γ² + β²) for n of zero mean and unit
    variance per coordinate (Ba et al. 2016, eq. 4); √d with the unit gain and zero bias of a fresh LayerNorm."""
    levels = []
    for branches in loaded.layout.blocks:
        norm: Any = branches.norms[-1]
        squares = (norm.weight.detach() ** 2).sum()
        if norm.bias is not None:
            squares = squares + (norm.bias.detach() ** 2).sum()
        levels.append(float(torch.sqrt(squares)))
    return levels


def trace_real(loaded: LoadedModel, text: str, options: TraceOptions | None = None) -> dict[str, Any]:
    options = options or TraceOptions()
    return trace_encoded(loaded, text, tokenize(loaded, text, options), options)


def trace_encoded(loaded: LoadedModel, text: str, encoded: dict[str, torch.Tensor], options: TraceOptions) -> dict:
    """The trace of tokens already encoded: input_ids (1, T) and offset_mapping (1, T, 2) into `text`."""
    ids = encoded["input_ids"]
    absent = _no_gradient_because(loaded, ids, options)
    record, output = run_watched(loaded, encoded, absent is None, options.attention)
    gradient = next_token_gradients(record, output, ids) if absent is None else None
    return trace_recorded(loaded, text, encoded, options, record, output, gradient)


def trace_recorded(
    loaded: LoadedModel,
    text: str,
    encoded: dict[str, torch.Tensor],
    options: TraceOptions,
    record: StreamRecord,
    output: Any,
    gradient: dict[str, Any] | None,
) -> dict[str, Any]:
    """The answer for one sentence from its forward pass: the record's tensors (1, T, d), the output's attention
    weights (1, H, T, T) and its gradient norms, from a pass of its own or its rows of a batch (real_batch.py)."""
    absent = _no_gradient_because(loaded, encoded["input_ids"], options)
    kinds = token_kinds(loaded, text, encoded)
    with torch.no_grad():
        streams = torch.stack([s[0].detach() for s in record.streams])  # (L+1, T, d)
        norms = streams.norm(dim=-1)
        result = {
            "model": loaded.describe(),
            "text": text,
            "tokens": token_labels(loaded, text, encoded),
            "token_kinds": kinds,
            "unknown_tokens": kinds.count("unknown"),
            "special_tokens": options.special_tokens,
            "layers": list(range(streams.shape[0])),  # 0: the stream before block 1
            "stream": {**_means(norms), "per_token": norms.tolist()},
            "cosine": {
                "mean": [mean_cosine(s, False) for s in streams],
                "mean_without_first": [mean_cosine(s, True) for s in streams],
            },
            "branches": {
                "attention": _means(torch.stack([a[0].detach().norm(dim=-1) for a in record.attention])),
                "mlp": _means(torch.stack([m[0].detach().norm(dim=-1) for m in record.mlp])),
            },
            "post_ln": _post_ln(record, kinds) if loaded.family == "post_ln" else None,
            "gradient": scaled(gradient, norms),
            "gradient_absent": absent,
            "massive": massive_activations(record, streams, _gains(loaded)),
            "attention": attention_sink(getattr(output, "attentions", None), loaded.causal)
            if options.attention
            else None,
            "attention_absent": None if not options.attention or eager_attention(loaded) else "not_eager",
        }
    result["theory"] = _theory(loaded, result)
    result["summary"] = _summary(result)
    return result


def _no_gradient_because(loaded: LoadedModel, ids: torch.Tensor, options: TraceOptions) -> str | None:
    """Why no next-token gradient is taken: "off" (not asked), "encoder" (no next-token loss), "one_token"
    (a causal model needs two tokens for one next-token prediction); None when it is taken."""
    if not options.gradients:
        return "off"
    if not loaded.causal:
        return "encoder"
    return "one_token" if ids.shape[1] < 2 else None


def _gains(loaded: LoadedModel) -> list[torch.Tensor] | None:
    if loaded.family != "post_ln":
        return None
    norms: list[Any] = [branches.norms[-1] for branches in loaded.layout.blocks]
    return [norm.weight.detach() for norm in norms]


def _post_ln(record: StreamRecord, kinds: list[str]) -> dict[str, Any]:
    """Per block: the sums x + F(x) before the attention's and the MLP's LayerNorm, those LayerNorms' outputs, and
    how far apart the tokens are before and after the block's last norm (largest / smallest token norm), over all
    tokens and over the text tokens alone (neither special nor [UNK]); "pinned" where the latter is at most 1.5."""
    sums = [s[0].detach().norm(dim=-1) for s in record.norm_inputs]
    outs = [o[0].detach().norm(dim=-1) for o in record.norm_outputs]
    text = torch.tensor([kind == "text" for kind in kinds])

    def spread(norms: torch.Tensor) -> float:
        return float(norms.max() / norms.min())

    text_spread = [spread(n[text]) if int(text.sum()) >= 2 else math.nan for n in outs[1::2]]

    return {
        "sum_before_attention_norm": [float(n.mean()) for n in sums[0::2]],
        "attention_norm_output": [float(n.mean()) for n in outs[0::2]],
        "sum_before_mlp_norm": [float(n.mean()) for n in sums[1::2]],
        "mlp_norm_output": [float(n.mean()) for n in outs[1::2]],
        "token_spread_before_norm": [spread(n) for n in sums[1::2]],
        "token_spread_after_norm": [spread(n) for n in outs[1::2]],
        "text_token_spread_after_norm": text_spread,
        "pinned": [math.isfinite(v) and v <= PINNED_SPREAD for v in text_spread],
        "pinned_spread": PINNED_SPREAD,
    }


def _theory(loaded: LoadedModel, result: dict[str, Any]) -> dict[str, Any]:
    pinned = loaded.family == "post_ln"
    return {
        "sqrt_d": math.sqrt(loaded.d_model),
        "pinned_level": pinned_levels(loaded) if pinned else None,
        "growth": None if pinned else growth_fit(result["stream"]["mean_without_first"]),
    }


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    stream = result["stream"]
    ratios = [
        f / r if r and r > 0 else math.nan for f, r in zip(stream["first"], stream["mean_without_first"], strict=True)
    ]
    finite = [r for r in ratios if math.isfinite(r)]
    return {
        "tokens": len(result["tokens"]),
        "first_token_ratio": ratios,
        "first_token_ratio_max": max(finite) if finite else math.nan,
        "final_mean_without_first": stream["mean_without_first"][-1],
    }
