"""What can go wrong with a pretrained model's trace, as exceptions that cross from the models process to a worker
whole (each pickles with its own arguments); real_answers.as_field_error turns them into answers."""

from __future__ import annotations


class ModelUnavailable(Exception):
    """The model cannot be loaded (a missing package, a damaged file, over the memory budget): retrying won't help."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.name, self.reason = name, reason

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return type(self), (self.name, self.reason)


class RoomFull(Exception):
    """More sentences wait than the queue holds: the client is told to send again after `retry_after` seconds."""

    def __init__(self, waiting: int, retry_after: int) -> None:
        super().__init__(f"{waiting} sentences are waiting for the models; send again in {retry_after} s")
        self.waiting, self.retry_after = waiting, retry_after

    def __reduce__(self) -> tuple[type, tuple[int, int]]:
        return type(self), (self.waiting, self.retry_after)


class ModelsProcessStopped(Exception):
    """The models process died with this sentence in it; it is being started again."""

    def __init__(self, name: str, reason: str = "stopped") -> None:
        super().__init__(f"the models process {reason} while it traced {name}; it is being started again")
        self.name, self.reason = name, reason

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return type(self), (self.name, self.reason)
