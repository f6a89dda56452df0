"""BENCHMARK BASELINE ONLY: EAD as the authors' vLLM V0 code applied it, one Python callable per sequence.

``PerRowLoopEADLogitsProcessor`` runs on vLLM's V1 ``AdapterLogitsProcessor``, which loops over the batch rows in
Python and launches small per-row ops; ``bench_vllm_processors.py`` measures what that costs against the vectorised
:class:`ead.samplers.vllm_processors.EADLogitsProcessorV1` (and ``tests/vllm/test_vllm_processors.py`` checks that
both divide the logits alike). Never use it for experiments. Like the package's processors, the class is built on
first attribute access (PEP 562), so importing this module does not import vLLM. It is loaded as the top-level
module ``vllm_per_row_processor`` (``benchmarks/`` on ``sys.path``, as when running a script from there):
``LLM(logits_processors=["vllm_per_row_processor:PerRowLoopEADLogitsProcessor", ...])``.
"""

from __future__ import annotations

from ead.samplers.vllm_processors import EADRequestParams, parse_ead_extra_args
from ead.schedule import annealed_temperature

__all__ = ["PER_ROW_LOOP_EXTRA_ARGS_KEY", "PER_ROW_LOOP_PROCESSOR", "PerRowLoopEADLogitsProcessor"]

#: extra_args key read by the per-row-loop processor (a nested dict with the EAD keys). It is a
#: separate key so both processors can be loaded in one engine and each request picks exactly one of them.
PER_ROW_LOOP_EXTRA_ARGS_KEY = "ead_per_row_loop_benchmark"


def _build_per_row_loop_class():
    """BENCHMARK BASELINE ONLY: the reference's per-sequence-callable design on vLLM's V1 adapter."""
    from vllm.v1.sample.logits_processor import AdapterLogitsProcessor

    def loop_params(sampling_params) -> EADRequestParams | None:
        return parse_ead_extra_args((sampling_params.extra_args or {}).get(PER_ROW_LOOP_EXTRA_ARGS_KEY))

    class PerRowLoopEADLogitsProcessor(AdapterLogitsProcessor):
        """BENCHMARK BASELINE ONLY (V1 runner): one Python callable per request, applied row by row.

        Mirrors the authors' vLLM V0 implementation (a lambda per sequence reading ``len(output_ids)``).
        vLLM's ``AdapterLogitsProcessor.apply`` loops over rows in Python and launches small per-row ops;
        ``benchmarks/bench_vllm_processors.py`` measures what that costs against :class:`EADLogitsProcessorV1`.
        Requests opt in with ``extra_args={PER_ROW_LOOP_EXTRA_ARGS_KEY: {"tau_max": ..., "tau_min": ...,
        "d": ..., "c": ...}}``.
        """

        @classmethod
        def validate_params(cls, sampling_params) -> None:
            loop_params(sampling_params)

        def is_argmax_invariant(self) -> bool:
            return True

        def new_req_logits_processor(self, params):
            ead = loop_params(params)
            if ead is None:
                return None

            def divide_by_annealed_temperature(output_ids, logits_row):
                tau = annealed_temperature(len(output_ids), ead.tau_max, ead.tau_min, ead.d, ead.c)
                return logits_row / tau

            return divide_by_annealed_temperature

    return PerRowLoopEADLogitsProcessor


#: Its FQCN for ``LLM(logits_processors=[...])``.
PER_ROW_LOOP_PROCESSOR = f"{__name__}:PerRowLoopEADLogitsProcessor"


def __getattr__(name: str):
    """Build the processor class on first access, importing vLLM only then (PEP 562)."""
    if name != "PerRowLoopEADLogitsProcessor":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    cls = _build_per_row_loop_class()
    cls.__module__, cls.__qualname__ = __name__, name  # vLLM's loaders and pickling resolve it by module + name
    globals()[name] = cls
    return cls
