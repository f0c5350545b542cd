"""The variant axes' values as static Literal types, for type checkers only (app/config/request.py imports them
under TYPE_CHECKING; pydantic validates against the variant table itself). Written by `python -m tools.variant_types`
from app/config/variants.py; tests/test_notebook_types.py fails when they differ. Do not edit by hand."""

from typing import Literal

Norm = Literal["layernorm", "layernorm_nobias", "rmsnorm", "scalenorm", "dyt", "batchnorm", "groupnorm", "none"]
NormPosition = Literal["pre", "post", "sandwich", "mix"]
Block = Literal["sequential", "parallel"]
Residual = Literal["identity", "none", "rezero", "highway", "dense"]
