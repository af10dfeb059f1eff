"""What a task is, as pure data: `task.toml` and its folder (`Task`, `TaskSpec`, `Limits`), the eval command,
glob sets, which files are the harness, unified-diff patches, environment recipes for real repositories,
selection by name or glob, and importers that write task folders from other collections. It imports only
`errors` and `sandbox` (importers run a task's tests to check it), never the cache, worktree, scorer or
tools.
"""
