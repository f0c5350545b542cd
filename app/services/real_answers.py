"""The pretrained models' answers as a worker gives them: POST /api/real_trace through the server's models process
(cached and coalesced like every other request, batched there with the other sentences waiting; a caller that leaves
takes its sentence out of the queue), POST /api/real_tokens with the tokenizer alone, what the models process holds,
and what each failure tells the client."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ..config.real import RealTraceRequest
from ..errors import Busy, FieldError
from ..experiments.real_trace import TooManyTokens
from ..models.real import loading
from ..models.real.weights import WeightsChanged
from . import real_client, real_models
from .compute import ComputePool
from .real_errors import ModelsProcessStopped, ModelUnavailable, RoomFull

LOOK_S = 0.5  # GET /api/real_models does not wait long to say what is loaded


async def _awaited(fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    return await fn(*args)


async def real_trace_answer(pool: ComputePool, request: RealTraceRequest) -> tuple[dict[str, Any], str]:
    """(the trace, where it came from), cached and coalesced under (the digest of the model's files, the library
    versions, the request), computed in the models process. A caller that leaves (its client disconnected) takes
    its sentence out of the queue if no other caller waits for it. A failure is a FieldError naming the field at
    fault."""
    import anyio

    try:
        source, digest = await anyio.to_thread.run_sync(real_models.resolve, request.model)
        key = request.cache_key(f"{digest}\n{sorted(loading.library_versions().items())}")
        models = real_client.get_models()
        return await pool.run_sourced(key, models.trace, source, digest, request, runner=_awaited, leave_cancels=True)
    except Exception as exc:
        error = as_field_error(exc)
        if error is None:
            raise
        raise error from None


async def token_count_answer(pool: ComputePool, request: RealTraceRequest) -> dict[str, Any]:
    """POST /api/real_tokens: the live token counter of /models (the tokenizer only, never the weights)."""
    import anyio

    try:
        source, digest = await anyio.to_thread.run_sync(real_models.resolve, request.model)
        # The tokenizer alone, in this worker: in the models process the count would wait behind a batch.
        counted = await pool.run_unslotted(real_models.count_tokens, source, digest, request)
        return {**counted, "revision": digest[:12], **loading.library_versions()}
    except Exception as exc:
        error = as_field_error(exc)
        if error is None:
            raise
        raise error from None


async def loaded_in_real_process() -> dict[str, dict[str, Any]]:
    """What the models process holds ({} if it is not running, or busy for longer than a look is worth)."""
    models = real_client.get_models()
    try:
        if not await models.reachable():
            return {}
        return await asyncio.wait_for(models.ask(real_models.loaded_descriptions), LOOK_S)
    except (asyncio.TimeoutError, ModelsProcessStopped):
        return {}


def as_field_error(exc: Exception) -> FieldError | Busy | None:
    """What a failed trace tells the client, naming the field at fault."""
    if isinstance(exc, TooManyTokens):
        return FieldError("text", str(exc), f"at most {exc.limit} tokens")
    if isinstance(exc, WeightsChanged):
        return Busy(retry_after=1, message=f"{exc}; send the request again")
    if isinstance(exc, RoomFull):
        return Busy(retry_after=exc.retry_after, message=str(exc))
    if isinstance(exc, ModelUnavailable):
        return FieldError("model", f"the model {exc.reason}", "another model from GET /api/real_models", status=503)
    if isinstance(exc, ModelsProcessStopped):
        return FieldError("model", str(exc), "the same request again in a few seconds", status=503, retry_after=5)
    return None
