"""One way to start and talk to llama-server, shared by ``bench`` (speed) and ``probe`` (acceptance).

``process`` starts a llama-server on a free 127.0.0.1 port and stops it; ``http`` sends it
requests with bounded waits; ``prompts`` holds the prompt sets both replay.
"""
