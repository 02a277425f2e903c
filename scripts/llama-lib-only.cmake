# Included right after llama.cpp's project() (CMAKE_PROJECT_llama.cpp_INCLUDE, set by
# scripts/llama-wheel). llama-cpp-python forces LLAMA_BUILD_COMMON on, but with its
# multimodal library off nothing it ships links llama-common: the Python package loads
# libllama and libggml alone. Common (its chat parsers, jinja, arg parsing and the
# vendored HTTP client) was 58% of the build's compile time here.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama: build common utils library" FORCE)
