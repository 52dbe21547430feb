"""Plain-Python helpers of the course: no ipywidgets, tested without a kernel.

* ``trace_view`` — each round's request and response, what changed from the round before
  (``round_changes``, ``RoundDiff``), and a Mermaid sequence diagram;
* ``server_trace`` — the same rounds as the server saw them, from every client
  (``ServerTrace``, from an observer's list or a ``serve --trace`` file);
* ``proxy`` — the address a learner's browser can open for a page served in the kernel
  (loopback locally, Jupyter's proxy on JupyterHub and Binder);
* ``urlinfo`` — what a URL-mode card must tell the user about a link (ELIC-13);
* ``standin`` — the local stand-in "model" that drafts sampling answers (not an LLM).
"""
