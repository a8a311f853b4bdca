"""Files loaded inside foreign interpreters through PYTHONPATH (sitecustomize and its helpers).

They are importable here too, so the host reads and writes cassettes with the very same code.
"""
