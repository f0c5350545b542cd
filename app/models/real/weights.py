"""Which weights computed an answer: the sha256 of the files a model is loaded from, and a cheap stat check that
says when to take it again.

A model is kept loaded under the digest of its files' content, and every answer's cache key carries the digest of
the weights that computed it, so swapped weights are never answered with old numbers, live or from the disk cache.

The stat check per request compares (inode, size, mtime, ctime) of every file. `cp -p new old` and `rsync -t`
keep the size and restore the modification time, but the kernel sets ctime to the current time on every write and
no system call lets a user set it back (only a clock change could): ctime is what catches a same-size, same-mtime
swap. The inode catches a file replaced by a rename (`mv new old`, `rsync` without --inplace). A changed stat
means rehash, not reload: a `touch` rehashes, finds the same digest and keeps the model.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from .sources import ModelSource

# Besides the weights, the files whose content changes the numbers or the tokens (GGUF files carry both inside)
CONFIG_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
)
CHUNK = 1 << 20
Signature = tuple[tuple[str, int, int, int, int], ...]


def weight_files(source: ModelSource) -> list[Path]:
    """The files `source` is loaded from (none for a hub id: its revision is its id)."""
    folder = Path(source.location)
    if source.kind == "hub" or not folder.is_dir():
        return []
    if source.gguf_file:
        return [folder / source.gguf_file]
    return sorted(folder.glob("*.safetensors")) + [folder / n for n in CONFIG_FILES if (folder / n).is_file()]


def stat_signature(files: list[Path]) -> Signature:
    """(name, inode, size, mtime, ctime) of each file, in nanoseconds: what a write, a rename or a truncation
    changes (see the module's docstring for why ctime)."""
    rows = []
    for path in files:
        stat = path.stat()
        rows.append((path.name, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns))
    return tuple(rows)


def content_digest(source: ModelSource, files: list[Path]) -> str:
    """sha256 over each file's name, size and bytes (a hub model: over its id)."""
    digest = hashlib.sha256(f"{source.kind}:{source.gguf_file}:{source.location if not files else ''}".encode())
    for path in files:
        digest.update(f"\n{path.name}:{path.stat().st_size}\n".encode())
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
    return digest.hexdigest()


class WeightsChanged(RuntimeError):
    """The files changed while they were read: the answer would not belong to any one version of them."""


class Digests:
    """The content digest of each source's files, taken again only when their stat changes (thread-safe)."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[Signature, str]] = {}
        self._lock = threading.Lock()
        self.hashed = 0  # how many times files were read and hashed: a stat check alone does not count

    def current(self, source: ModelSource) -> tuple[Signature, str]:
        """(the files' stat signature now, the digest of their content under that signature)."""
        files = weight_files(source)
        key = f"{source.name}\n{source.location}\n{source.gguf_file}"
        for _ in range(3):
            signature = stat_signature(files)
            with self._lock:
                known = self._known.get(key)
            if known is not None and known[0] == signature:
                return known
            digest = content_digest(source, files)
            self.hashed += 1
            if stat_signature(files) == signature:  # nothing wrote to the files while they were hashed
                with self._lock:
                    self._known[key] = (signature, digest)
                return signature, digest
        raise WeightsChanged(f"the weight files of {source.name} keep changing while they are read")

    def forget(self) -> None:
        """As a new process: every digest taken again at the next request."""
        with self._lock:
            self._known.clear()

    def unchanged_since(self, source: ModelSource, signature: Signature) -> bool:
        return stat_signature(weight_files(source)) == signature


DIGESTS = Digests()
