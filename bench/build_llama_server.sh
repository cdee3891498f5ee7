#!/usr/bin/env bash
# Build llama.cpp's llama-server for the CPU, once, in a cache folder outside the repository.
#
#     bash bench/build_llama_server.sh [DIR]      # default: ~/.cache/prefixlint/llama.cpp
#
# The source is llama.cpp as vendored in the llama-cpp-python sdist (a PyPI download, no git
# needed): DIR/src, with its llama.cpp commit in DIR/src/COMMIT (read from the sdist's git
# metadata). The build is DIR/build (Release, no curl, no OpenSSL, no web UI; -O1, which
# compiles much faster and is quick enough for the tiny model); the binary is
# DIR/build/bin/llama-server, printed last. An existing build is reused (ninja rebuilds only
# what changed). About 20-40 minutes on 2 cores; the compiler runs under `nice -n 19`.
# Environment: LLAMA_CPP_PYTHON_VERSION (default 0.3.36: llama.cpp 0c1e5709), JOBS (default 2).
set -euo pipefail
DIR=${1:-$HOME/.cache/prefixlint/llama.cpp}
VERSION=${LLAMA_CPP_PYTHON_VERSION:-0.3.36}
PYTHON=${PYTHON:-python3}
mkdir -p "$DIR"
cd "$DIR"

if [[ ! -f src/CMakeLists.txt ]]; then
    rm -rf download src.tmp
    nice -n 19 "$PYTHON" -m pip download --no-deps --no-binary :all: \
        "llama-cpp-python==$VERSION" -d download
    sdist=$(ls download/llama_cpp_python-"$VERSION".tar.gz)
    mkdir -p src.tmp
    nice -n 19 tar -xzf "$sdist" -C src.tmp
    root=src.tmp/llama_cpp_python-$VERSION
    cat "$root/.git/modules/vendor/llama.cpp/HEAD" >"$root/vendor/llama.cpp/COMMIT"
    rm -f "$root/vendor/llama.cpp/.git"
    mv "$root/vendor/llama.cpp" src
    rm -rf src.tmp download
fi
echo "llama.cpp $(cat src/COMMIT)" >&2

if [[ ! -f build/build.ninja ]]; then
    nice -n 19 cmake -S src -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
        "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_NUMBER=0 >&2
fi
nice -n 19 cmake --build build --target llama-server -j "${JOBS:-2}" >&2
echo "$DIR/build/bin/llama-server"
