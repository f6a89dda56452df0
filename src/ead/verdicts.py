"""The one decision rule behind every verdict of the pipeline: an effect's 95% confidence interval -> a verdict.
The claims (:mod:`ead.claims`) use it, and so do the analyses that state verdicts of their own (the premise probe's
G1-G3, the inference-only headline); it sits below both so that neither imports the other.

A claim says an effect lies above (``direction="greater"``) or below (``"less"``) a threshold. With the effect's
95% CI [low, high]:

* ``supported``: the whole CI lies on the claimed side of the threshold;
* ``contradicted``: the whole CI lies on the other side (the data rule the claim out at this confidence);
* ``inconclusive``: the CI contains the threshold (this experiment cannot tell; its minimum detectable effect
  says how large an effect it could have seen);
* ``negligible``: the claim declared, before its run, the smallest effect it cares about (``smallest_effect`` m, in
  the metric's units: 0.02 is 2 points of Pass@1), and the whole CI lies inside (threshold - m, threshold + m): an
  effect of a size that matters is ruled out, in either direction. This is an equivalence test on the 95% CI (more
  conservative than the usual two one-sided tests on the 90% CI), and it is read first: a CI inside the band that
  also excludes the threshold (a real but small effect) reads ``negligible``, and the rule says which side it lies.
  A claim without a declared ``smallest_effect`` never reads negligible, and neither does a CI of zero width (every
  paired difference equal, or a single one): it rests on no spread, so it cannot rule an effect out.

Claims made of several parts (``combine``) are contradicted when any part is, negligible when no part is
contradicted and some part is negligible (the whole claim needs every part), supported when every part is, and
inconclusive otherwise.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

VERDICTS = ("supported", "contradicted", "inconclusive", "negligible")


@dataclass(frozen=True)
class Verdict:
    verdict: str  # one of VERDICTS
    rule: str  # the decision rule applied, in words, with the numbers it compared


def decide(ci_low: float, ci_high: float, *, threshold: float = 0.0, direction: str = "greater",
           smallest_effect: float | None = None) -> Verdict:
    """Verdict on "effect > threshold" (or "< threshold" with ``direction="less"``) from the effect's CI; with
    ``smallest_effect`` m > 0, a CI of non-zero width inside (threshold - m, threshold + m) reads ``negligible``."""
    if direction not in ("greater", "less"):
        raise ValueError(f"direction must be 'greater' or 'less', got {direction!r}")
    if not (math.isfinite(ci_low) and math.isfinite(ci_high)) or ci_low > ci_high:
        raise ValueError(f"need a finite CI with low <= high, got [{ci_low}, {ci_high}]")
    if smallest_effect is not None and not (isinstance(smallest_effect, numbers.Real) and not isinstance(
            smallest_effect, bool) and math.isfinite(smallest_effect) and smallest_effect > 0):
        raise ValueError(f"smallest_effect must be a finite number > 0 (or None), got {smallest_effect!r}")
    side = ">" if direction == "greater" else "<"
    interval = f"95% CI [{ci_low:.4g}, {ci_high:.4g}]"
    supported = (direction == "greater" and ci_low > threshold) or (direction == "less" and ci_high < threshold)
    contradicted = (direction == "greater" and ci_high < threshold) or (direction == "less" and ci_low > threshold)
    if smallest_effect is not None and ci_low < ci_high and \
            threshold - smallest_effect < ci_low and ci_high < threshold + smallest_effect:
        band = f"({threshold - smallest_effect:g}, {threshold + smallest_effect:g})"
        also = (f"; it also lies entirely {side} {threshold:g}: real, and smaller than matters" if supported else
                f"; it also lies entirely on the other side of {threshold:g}, by less than matters" if contradicted
                else "")
        return Verdict("negligible", f"{interval} inside {band}, the smallest effect that matters "
                                     f"({smallest_effect:g}) either way{also}")
    if supported:
        return Verdict("supported", f"{interval} entirely {side} {threshold:g}")
    if contradicted:
        return Verdict("contradicted", f"{interval} entirely on the other side of {threshold:g}")
    return Verdict("inconclusive", f"{interval} contains {threshold:g}")


def combine(parts: list[Verdict]) -> Verdict:
    """Any part contradicted -> contradicted; else any part negligible -> negligible; all parts supported ->
    supported; otherwise inconclusive."""
    if not parts:
        raise ValueError("combine needs at least one verdict")
    names = [part.verdict for part in parts]
    verdict = ("contradicted" if "contradicted" in names else "negligible" if "negligible" in names
               else "supported" if set(names) == {"supported"} else "inconclusive")
    return Verdict(verdict, "; ".join(part.rule for part in parts))
