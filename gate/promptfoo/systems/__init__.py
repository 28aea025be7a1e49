"""promptfoo at the systems stage: a prompt and a provider of a promptfoo config called as
promptfoo calls them (`system`: the provider mapping, the request and the output as promptfoo's
provider returns it), the prompt rendered as promptfoo's `renderPrompt` renders it (`prompts`).

The face: `PromptfooChatSystem` (gate.yml's `kind: promptfoo` system, built by name in
`gate.systems`) and `prompt_renderer` (`gate validate` renders every case's prompt with it)."""

from gate.promptfoo.systems.system import PromptfooChatSystem, prompt_renderer

__all__ = ["PromptfooChatSystem", "prompt_renderer"]
