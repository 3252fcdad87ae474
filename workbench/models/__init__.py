"""Running models: prompt templates, the llama.cpp backend, and the resumable runner."""

from workbench.models.events import (
    GenerationFinished,
    ModelLoaded,
    RunFinished,
    RunnerEvent,
    RunStarted,
    RunSummary,
)
from workbench.models.registry import (
    default_model,
    embedded_model_path,
    register_model,
    resolve_model,
)
from workbench.models.request import MODES, GenerationRequest, Sampler
from workbench.models.runner import Runner
from workbench.models.templates import DEFAULT_TEMPLATE, TEMPLATES, get_template

__all__ = [
    "DEFAULT_TEMPLATE",
    "MODES",
    "TEMPLATES",
    "GenerationFinished",
    "GenerationRequest",
    "ModelLoaded",
    "RunFinished",
    "RunStarted",
    "RunSummary",
    "Runner",
    "RunnerEvent",
    "Sampler",
    "default_model",
    "embedded_model_path",
    "get_template",
    "register_model",
    "resolve_model",
]
