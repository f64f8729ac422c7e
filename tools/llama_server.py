"""llama-cpp-python's OpenAI-compatible server with llama.cpp's extra weight buffer types turned off.

Run it with the live venv's Python, exactly like ``python -m llama_cpp.server`` (same arguments)::

    .venv-live/bin/python tools/llama_server.py --model FILE --host 127.0.0.1 --port 8000 --n_ctx 4096

Why: ``pip install llama-cpp-python`` compiles llama.cpp for the build machine's CPU (``-march=native``). On a
CPU that reports Intel AMX, the weights then go to ggml's AMX buffer and the first prompt of more than one
token runs ``ldtilecfg``; where the (virtual) machine does not really let processes use AMX tiles, that
instruction faults and the server dies with a segmentation fault on its first chat completion (seen here:
"general protection fault ... in libggml-cpu.so" at ``ggml_backend_amx_mul_mat``). The server has no option
for it, so this sets ``use_extra_bufts = false`` in llama.cpp's model parameters (the weights stay in plain
CPU buffers, the AVX2/AVX-512 kernels run) and then starts the server unchanged. It imports only
llama-cpp-python, never SimLab.
"""

from __future__ import annotations

import runpy

import llama_cpp.llama_cpp as lib

_default_params = lib.llama_model_default_params


def _model_params() -> lib.llama_model_params:
    params = _default_params()
    if hasattr(params, "use_extra_bufts"):  # llama.cpp builds from mid-2025 on
        params.use_extra_bufts = False
    return params


if __name__ == "__main__":
    lib.llama_model_default_params = _model_params
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
