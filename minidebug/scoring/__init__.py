"""What the reward rests on: the task's counted test ids (fixed once per task content), the eval tree (the
pristine tree plus the agent's text patch to the files it owns), one confined pytest run whose outcomes come
back over a socket (fresh, or forked from a warm interpreter of `runner`), and the score. It builds on
`runner`, `workspace`, `store`, `tasks` and `sandbox`, and knows
nothing of tools or agents.
"""
