"""Samplers: draw responses under a temperature schedule and return exact behaviour log-probs.

* :mod:`ead.samplers.hf` - torch/transformers: a LogitsProcessor and a batched, KV-cached sampling loop that
  returns per token the behaviour log-prob, the tau = 1 (target) log-prob and the tau = 1 entropy.
* :mod:`ead.samplers.vllm_processors` - EAD logits processors for vLLM's V1 and Model Runner V2 interfaces.
* :mod:`ead.samplers.engines` - the HF and vLLM engines (and the model loader) that sample N completions per prompt
  into a tidy table; :mod:`ead.samplers.sample` is their command line.
"""
