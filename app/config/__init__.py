"""The request model and everything derived from it, one concern a module:

- `request`: TraceConfig, the one source of truth (fields, bounds, labels, consistency checks);
- `budget`: what a request may cost (multiply-adds, parameters, saved floats) and the depth limit;
- `presets`: named architectures;
- `fields`: bilingual schema fields and allowed ranges in words;
- `variants`: every norm, norm position, residual and block once (labels, help, physics such as `pins_token`).
"""

from .budget import (
    MAX_ACTIVATION_FLOATS,
    MAX_DEPTH,
    MAX_FORWARD_MACS,
    MAX_PARAMETERS,
    activation_floats,
    dense_weights,
    fits_budget,
    forward_macs,
    parameter_count,
    units_per_block,
)
from .fields import field_bounds, labelled_field
from .presets import PRESETS, REFERENCE_MODEL, deepnorm_alpha, preset_config, presets_payload
from .request import Activation, Arch, Block, DType, Init, Norm, NormPosition, Residual, TraceConfig, group_counts
from .variants import VARIANTS, Variant, variants_payload

__all__ = [
    "MAX_ACTIVATION_FLOATS",
    "MAX_DEPTH",
    "MAX_FORWARD_MACS",
    "MAX_PARAMETERS",
    "PRESETS",
    "REFERENCE_MODEL",
    "VARIANTS",
    "Activation",
    "Arch",
    "Block",
    "DType",
    "Init",
    "Norm",
    "NormPosition",
    "Residual",
    "TraceConfig",
    "Variant",
    "activation_floats",
    "deepnorm_alpha",
    "dense_weights",
    "field_bounds",
    "fits_budget",
    "forward_macs",
    "group_counts",
    "labelled_field",
    "parameter_count",
    "preset_config",
    "presets_payload",
    "units_per_block",
    "variants_payload",
]
