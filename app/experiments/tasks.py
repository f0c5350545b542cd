"""Synthetic sequence tasks a tiny causal Transformer can learn on a CPU in seconds.

Every task writes `a_1 .. a_n SEP b_1 .. b_n`, where the a's are random data symbols and the b's are
what the model must produce; the model reads the sequence left to right and is scored only on the
b's (the a's are unpredictable by construction). SEP is the last symbol of the vocabulary.
Batches come from a seeded torch.Generator, so every run of one request sees the same data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

EVAL_SEQUENCES = 256  # held-out sequences scored at the end of a run
EVAL_SEED_OFFSET = 7919  # the held-out set uses its own generator, never the training stream's


def _copy(first: torch.Tensor) -> torch.Tensor:
    return first


def _reverse(first: torch.Tensor) -> torch.Tensor:
    return first.flip(-1)


def _sort(first: torch.Tensor) -> torch.Tensor:
    return first.sort(dim=-1).values


@dataclass(frozen=True)
class Task:
    key: str
    name: str
    name_zh: str
    description: str
    description_zh: str
    answer: Callable[[torch.Tensor], torch.Tensor]


TASKS: dict[str, Task] = {
    "copy": Task(
        "copy",
        "Copy",
        "复制",
        "a b c SEP → a b c: the second half repeats the first; scored on the second half.",
        "a b c SEP → a b c：后半段重复前半段；只在后半段计分。",
        _copy,
    ),
    "reverse": Task(
        "reverse",
        "Reverse",
        "反转",
        "a b c SEP → c b a: the second half is the first half backwards; scored on the second half.",
        "a b c SEP → c b a：后半段是前半段的倒序；只在后半段计分。",
        _reverse,
    ),
    "sort": Task(
        "sort",
        "Sort",
        "排序",
        "c a b SEP → a b c: the second half is the first half sorted; scored on the second half.",
        "c a b SEP → a b c：后半段是前半段排序后的结果；只在后半段计分。",
        _sort,
    ),
}


class TaskMismatch(ValueError):
    """The model cannot hold the task (too short a sequence, too small a vocabulary)."""

    def __init__(self, field: str, message: str, allowed: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message, self.allowed = field, message, allowed


@dataclass(frozen=True)
class TaskShape:
    """How one model config holds a task: n data symbols, SEP, n answers; the model reads 2n tokens."""

    half: int  # n
    symbols: int  # data alphabet size: vocab_size - 1 (SEP is reserved)
    separator: int  # the SEP token id

    @property
    def length(self) -> int:
        return 2 * self.half


def task_shape(seq_len: int, vocab_size: int, prefix: str = "") -> TaskShape:
    """Derive the task layout from the model's seq_len and vocab_size; raise TaskMismatch if it cannot fit."""
    if vocab_size < 3:
        raise TaskMismatch(
            f"{prefix}vocab_size", f"the tasks need 2 data symbols plus a separator; got {vocab_size}", ">= 3"
        )
    if seq_len < 2:
        raise TaskMismatch(
            f"{prefix}seq_len", f"the tasks need at least one symbol and its answer; got {seq_len}", ">= 2"
        )
    return TaskShape(half=seq_len // 2, symbols=vocab_size - 1, separator=vocab_size - 1)


def make_sequences(task: Task, shape: TaskShape, count: int, generator: torch.Generator) -> torch.Tensor:
    """(count, 2n + 1) token ids: a_1..a_n SEP b_1..b_n."""
    first = torch.randint(shape.symbols, (count, shape.half), generator=generator)
    separator = torch.full((count, 1), shape.separator, dtype=first.dtype)
    return torch.cat([first, separator, task.answer(first)], dim=1)


def split(sequences: torch.Tensor, shape: TaskShape) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(inputs, targets, scored): next-token pairs and the mask of target positions that are answers b_i."""
    inputs, targets = sequences[:, :-1], sequences[:, 1:]  # (B, 2n) each
    scored = torch.zeros_like(targets, dtype=torch.bool)
    scored[:, shape.half :] = True  # targets at positions n.. are b_1..b_n
    return inputs, targets, scored


def train_batches(task: Task, shape: TaskShape, batch: int, seed: int):
    """An endless stream of fresh training batches (inputs, targets, scored)."""
    generator = torch.Generator().manual_seed(seed)
    while True:
        yield split(make_sequences(task, shape, batch, generator), shape)


def eval_set(task: Task, shape: TaskShape, seed: int, count: int = EVAL_SEQUENCES):
    """Held-out sequences from a generator the training stream never touches."""
    generator = torch.Generator().manual_seed(seed + EVAL_SEED_OFFSET)
    return split(make_sequences(task, shape, count, generator), shape)


def tasks_payload() -> list[dict[str, str]]:
    return [
        {
            "key": t.key,
            "name": t.name,
            "name_zh": t.name_zh,
            "description": t.description,
            "description_zh": t.description_zh,
        }
        for t in TASKS.values()
    ]
