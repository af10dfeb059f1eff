"""The one place that starts programs: the process runner (own session, killed whole on timeout, capped
output, an allowlisted environment), confinement (resource limits, a pids cgroup, the seccomp filter that
keeps programs in their group), bubblewrap's mounts and the Landlock ruleset that mirrors them, the choice
of sandbox, and the reaper (the one /proc scanner and kill loop). It imports only `errors`.
"""
