"""Finding launch commands in the files where they live (``paircheck lint``).

One module per kind of file (``compose``, ``kubernetes``, ``systemd``, ``shell``,
``dockerfile``), each turning a file's text into ``found.FoundCommand``s: the argv a launcher
would receive, each word with its line and column, the environment it runs with, and how its
model paths reach this machine. ``paircheck.preflight.lint_files`` judges each one exactly as
``lint-cmd`` does. ``words`` is the shell-like tokenizer they share, ``yaml_nodes`` the YAML
reader that keeps line numbers, ``images`` the entrypoints of the engines' published images.
"""
