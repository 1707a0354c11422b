"""Prompt templates for the strategies, each with a stable hash recorded in trajectories."""

from scanrag.agents.prompts.base import Prompt, module_hash

__all__ = ["Prompt", "module_hash"]
