"""The context a model is sent: a session's live entries rendered as a provider's messages.

:mod:`~aptmem.context.pairing` pairs tool results with their calls; :mod:`~aptmem.context.render`
turns entries into provider-neutral messages (working memory and the compaction summary in the
system part); :mod:`~aptmem.context.openai` and :mod:`~aptmem.context.anthropic` write them as the
OpenAI chat and the Anthropic Messages formats.
"""
