"""One episode's files: a `git worktree` in a fresh temp dir, reset by checkout and clean, the diff of the
agent's changes, restoring read-only files, and safe file operations (`safefs`) that never follow a link
the agent made. It builds on `store` (the bare repo it adds the worktree from) and `tasks`.
"""
