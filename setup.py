"""The compiled part of the build: the trie walk kernel (``grammar_decode/masking/_walk.c``, the
CPython C API, no other dependency). ``optional``: where no C compiler is found the package still
installs, and masks use the Python walk (one warning says so). Everything else is in
``pyproject.toml``."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("grammar_decode.masking._walk", ["grammar_decode/masking/_walk.c"],
                             extra_compile_args=["-O2"], optional=True)])
