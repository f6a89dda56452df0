# Input functions of the hub-model rule (hub_models.smk, which includes this file).


def get_paper_model_params(wildcards):
    """The hub id and revision of one of paper_models."""
    model = SWITCHES.hub_models[wildcards.hub_model]
    return {"hub_id": model.hub_id, "revision": model.revision}
