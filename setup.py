"""The compiled part of the build: the expression store and the lexer's cells
(``grammar_decode/ir/_exprs.c``, ``_cells.c``), the parse states and the parser's rewrite of a grammar and its nesting analysis (``grammar_decode/engine/_parse.c``, ``_rewrite.c``, ``_nesting.c``), the trie walk kernels (``grammar_decode/masking/_walk.c``) and
the masked-logits kernel (``grammar_decode/masking/_logits.c``), the CPython C API, no other
dependency. ``optional``: where no C compiler is found the package still installs, and masks use
the Python walks and numpy (one warning says so). Everything else is in ``pyproject.toml``."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("grammar_decode.ir._exprs", ["grammar_decode/ir/_exprs.c", "grammar_decode/ir/_cells.c",
                                                         "grammar_decode/ir/_empty.c"],
                             depends=["grammar_decode/ir/_exprs.h"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("grammar_decode.engine._parse", ["grammar_decode/engine/_parse.c"], depends=["grammar_decode/engine/_vec.h"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("grammar_decode.engine._rewrite", ["grammar_decode/engine/_rewrite.c"], depends=["grammar_decode/engine/_vec.h"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("grammar_decode.engine._nesting", ["grammar_decode/engine/_nesting.c"], depends=["grammar_decode/engine/_vec.h"],
                             extra_compile_args=["-O2"], optional=True),
                   Extension("grammar_decode.masking._walk", ["grammar_decode/masking/_walk.c"],
                             extra_compile_args=["-O2"], optional=True),
                   # -O3: the loop is vectorised (one branch-free pass over the logits)
                   Extension("grammar_decode.masking._logits", ["grammar_decode/masking/_logits.c"],
                             extra_compile_args=["-O3"], optional=True)])
