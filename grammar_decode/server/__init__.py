"""``grammar-decode serve``: an OpenAI-compatible HTTP server whose structured outputs are enforced
by the library's masks (extra ``[serve]``): ``protocol`` reads requests strictly, ``constraints``
turns them into one compiled grammar, ``backend`` runs the model, ``app`` serves HTTP."""
