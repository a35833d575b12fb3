"""Running untrusted code: scrubbed environment, rlimits, a pids cgroup, process-group kill, no network."""
