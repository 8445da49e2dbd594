"""The one compiled part: the PIMC bot's double-dummy solver core (skatbus/pimc/_dds.c).

Everything else is configured in pyproject.toml. The extension is optional: where no C
compiler is present the install still succeeds and the bot uses its Python solver (slower,
same answers), so ``make run`` and ``make test`` work on any machine with Python.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "skatbus.pimc._dds",
            sources=["skatbus/pimc/_dds.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
