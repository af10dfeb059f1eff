"""The cache on disk, shared by every episode on the machine: a bare git repo per task, one clone per real
repository, a venv per (interpreter, requirements, recipe), interpreters found on the machine, host-side git
that never runs a program of the repository's choosing, file locks, the fingerprints and manifests (tree
guard, watching with inotify) that notice a changed venv or pristine tree, and removing trees a program may
have shaped. It builds on `tasks` and starts programs through `sandbox`.
"""
