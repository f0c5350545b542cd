"""rx.real_trace: the residual stream of a real pretrained Transformer, in this process.

    rx.real_trace("smollm2", "The quick brown fox jumps over the lazy dog.")   # packaged: as POST /api/real_trace
    rx.real_trace("/path/to/a/hf/folder", "…")                                # a local safetensors or GGUF folder
    rx.real_trace(model, "…", tokenizer)        # a transformers model already in memory, given back as it was
    rx.real_trace(model, [1, 2, 3])             # token ids, without a tokenizer

A packaged or local model goes through the server's own shelf and function, so the answer has the same schema
and numbers as POST /api/real_trace. A model object is traced in evaluation mode and given back unchanged: each
module's train/eval mode is put back, no parameter's requires_grad is touched, and every hook is removed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from ..config.real import RealTraceRequest
from ..experiments.real_trace import TraceOptions, encode, trace_encoded
from ..models.pretrained.loading import _is_causal, describe_model
from ..models.pretrained.sources import ModelSource, local_source

__all__ = ["real_trace"]


def real_trace(
    model: Any,
    text_or_ids: str | list[int] | Any,
    tokenizer: Any = None,
    *,
    gradients: bool = True,
    attention: bool = True,
    special_tokens: bool = False,
) -> dict[str, Any]:
    """The trace of `text_or_ids` through `model` (a packaged or local model's name, or a transformers model)."""
    options = TraceOptions(gradients=gradients, attention=attention, special_tokens=special_tokens)
    if isinstance(model, (str, Path)):
        if not isinstance(text_or_ids, str):
            raise TypeError("a model given by name traces a text (a str): pass a model object to trace token ids")
        return _by_name(str(model), text_or_ids, options)
    return _in_memory(model, text_or_ids, tokenizer, options)


def _by_name(name: str, text: str, options: TraceOptions) -> dict[str, Any]:
    from ..services import real_models

    found = real_models.sources()
    if name in found:
        source, digest = real_models.resolve(name)
    else:
        folder = Path(name).expanduser()
        local = local_source(folder) if folder.is_dir() else None
        if local is None:
            raise ValueError(f"unknown model {name!r}: one of {', '.join(found) or 'none'}, or a Hugging Face folder")
        source, digest = local, real_models.DIGESTS.current(local)[1]
    request = RealTraceRequest(
        model=source.name,
        text=text,
        gradients=options.gradients,
        attention=options.attention,
        special_tokens=options.special_tokens,
    )
    return real_models.compute_real_trace(source, digest, request)


class _IdsOnly:
    """A tokenizer stand-in for token ids given without one: each token is labelled by its id."""

    unk_token_id, unk_token = None, None
    all_special_ids: ClassVar[list[int]] = []

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        return [str(i) for i in ids]


def _checked(model: Any) -> None:
    """One clear line for a model this function cannot run as it is."""
    import torch

    if not hasattr(model, "config") or not callable(getattr(model, "get_input_embeddings", None)):
        raise TypeError(f"expected a transformers PreTrainedModel or a model's name, got {type(model).__name__}")
    tensors = [*model.parameters(), *model.buffers()]
    devices = {str(t.device) for t in tensors}
    dtypes = {t.dtype for t in tensors if t.is_floating_point()}
    if devices - {"cpu"} or dtypes - {torch.float32, torch.float64}:
        raise ValueError(
            f"the model is on {', '.join(sorted(devices))} in {', '.join(sorted(map(str, dtypes)))}: real_trace "
            "runs on the CPU in float32 or float64; pass a copy, e.g. copy.deepcopy(model).to('cpu', torch.float32)"
        )


def _in_memory(model: Any, text_or_ids: Any, tokenizer: Any, options: TraceOptions) -> dict[str, Any]:
    import torch

    _checked(model)
    source = ModelSource(type(model).__name__, "local", "", "", f"{type(model).__name__} (in memory)")
    if isinstance(text_or_ids, str):
        if tokenizer is None:
            raise TypeError("a text needs its tokenizer: real_trace(model, text, tokenizer), or pass token ids")
        text, encoded = text_or_ids, encode(tokenizer, text_or_ids, options.special_tokens)
    else:
        ids = torch.as_tensor(text_or_ids, dtype=torch.long).reshape(1, -1)
        text = ""
        encoded = {"input_ids": ids, "offset_mapping": torch.zeros(1, ids.shape[1], 2, dtype=torch.long)}
    loaded = describe_model(model, tokenizer or _IdsOnly(), source, _is_causal(model.config))
    modes = [(module, module.training) for module in model.modules()]
    model.eval()  # dropout off: the trace is of the model as it is used, not as it is trained
    try:
        return trace_encoded(loaded, text, encoded, options)
    finally:
        for module, training in modes:
            module.training = training
