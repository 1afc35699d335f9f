# The common commands. `make test` works on a fresh Debian or Ubuntu machine:
# it installs what the tests need, then runs every test.

GO      ?= go
SUDO    := $(shell [ "$$(id -u)" = 0 ] || command -v sudo >/dev/null && [ "$$(id -u)" != 0 ] && echo sudo)
# Packages the tests need: real OpenSSH, the login shells hoist is tested
# under, busybox for a busybox userland, util-linux for namespaces, acl for
# stores with ACLs, xz, zstd and zip for archives users have, shellcheck for
# make lint, docker-registry (CNCF distribution) for a real OCI registry, and
# curl, wget and openssl, the tools hosts fetch from it with (busybox wget
# runs openssl for https).
TEST_DEBS := openssh-server openssh-client zsh fish tcsh mksh busybox util-linux procps iproute2 acl xz-utils zstd zip shellcheck docker-registry curl wget openssl
TEST_CMDS := sshd ssh ssh-keygen zsh fish tcsh mksh busybox unshare ps setfacl xz zstd zip shellcheck docker-registry curl wget openssl

.PHONY: all build demo test deps unit e2e bench lint clean sandbox sandbox-down sandbox-test

all: build

# The version is stamped from git (tag, or commit, and "-dirty" for local
# changes); hoist version falls back to the build info without it.
build:
	$(GO) build -ldflags "-X main.buildVersion=$$(git describe --always --dirty 2>/dev/null || echo dev)" -o bin/hoist ./cmd/hoist

# The main job on the built-in local target: no ssh, no setup. A small
# runtime is pushed, activated, replaced, rolled back and collected; the store
# goes to a scratch root so that nothing in your home is touched.
demo: build
	@set -e; tmp=$$(mktemp -d); root=$$tmp/hoist; src=$$tmp/hello; \
	mkdir -p $$src/bin; printf '#!/bin/sh\necho "hello from runtime v1"\n' >$$src/bin/hello; chmod +x $$src/bin/hello; \
	set -x; \
	bin/hoist --root "$$root" push "$$src" --activate; \
	bin/hoist --root "$$root" push "$$src"; \
	bin/hoist --root "$$root" run -- "$$root/current/bin/hello"; \
	sed -i 's/v1/v2/' $$src/bin/hello; \
	bin/hoist --root "$$root" push "$$src" --activate; \
	bin/hoist --root "$$root" run -- "$$root/current/bin/hello"; \
	bin/hoist --root "$$root" list; \
	bin/hoist --root "$$root" rollback; \
	bin/hoist --root "$$root" gc --keep 0 --dry-run; \
	bin/hoist --root "$$root" lock status

# Installs the test dependencies when any is missing (apt-get, as root or
# through sudo) and the Go modules. The docker-registry package starts a
# registry service on port 5000: when this installed the package, the
# service is stopped and disabled again (the tests start registries of their
# own). A machine without a machine id (a minimal container image) gets one,
# as systemd gives one at first boot: the previous-boot rule needs it, and
# its tests reboot hosts of this machine.
deps:
	@missing=; for c in $(TEST_CMDS); do command -v $$c >/dev/null 2>&1 || [ -x /usr/sbin/$$c ] || missing="$$missing $$c"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing test dependencies (missing:$$missing)"; \
		had_registry=; dpkg-query -W -f='$${Status}' docker-registry 2>/dev/null | grep -q 'ok installed' && had_registry=1; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(TEST_DEBS) >/dev/null || exit 1; \
		if [ -z "$$had_registry" ]; then \
			echo "disabling the docker-registry service the package set up (the tests run their own registries)"; \
			if [ -d /run/systemd/system ]; then $(SUDO) systemctl disable --now docker-registry.service >/dev/null 2>&1 || true; \
			else $(SUDO) service docker-registry stop >/dev/null 2>&1 || true; $(SUDO) update-rc.d docker-registry disable >/dev/null 2>&1 || true; fi; \
		fi; \
	fi
	@if [ ! -s /etc/machine-id ] && [ ! -s /var/lib/dbus/machine-id ]; then \
		echo "giving this machine a machine id (/etc/machine-id)"; \
		tr -d '-' </proc/sys/kernel/random/uuid | $(SUDO) tee /etc/machine-id >/dev/null; \
	fi
	$(GO) mod download

test: deps lint unit e2e
	@if ! command -v podman >/dev/null 2>&1; then echo "make test: podman is not installed: the sandbox fleet test is skipped (make sandbox-test runs it)"; \
	elif [ "$$(id -u)" != 0 ]; then echo "make test: not root: the sandbox fleet test is skipped (it needs rootful podman: sudo make sandbox-test)"; \
	elif ! e2e/sandbox/fleet check; then echo "make test: podman cannot run containers here (podman info fails): the sandbox fleet test is skipped (make sandbox-test runs it)"; \
	elif ! e2e/sandbox/fleet image; then echo "make test: the sandbox image could not be built (debootstrap needs deb.debian.org): the sandbox fleet test is skipped (make sandbox-test runs it)"; \
	else $(MAKE) --no-print-directory sandbox-test; fi

unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v /e2e)

# End to end against real sshd. Most tests wait on hosts rather than burn
# CPU, so more of them run at once than there are cores.
e2e:
	$(GO) test -race -count=1 -parallel 8 -timeout 20m ./e2e/...

# The quick ones (a warm run, a status) take 50 iterations, which this
# machine's noise needs; the others 5.
bench: deps
	$(GO) test -run '^$$' -bench 'RunUncontended|Status' -benchtime 50x ./e2e/
	$(GO) test -run '^$$' -bench . -skip 'RunUncontended|Status' -benchtime 5x ./e2e/

# gofmt, vet and staticcheck for the Go code, and the command built for macOS
# and FreeBSD (workstations hoist runs on); shellcheck for the host-side
# shell functions, as POSIX sh (.shellcheckrc says what it excludes, and why).
lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: the files above need formatting"; exit 1; }
	$(GO) vet ./...
	GOOS=darwin $(GO) build -o /dev/null ./cmd/hoist
	GOOS=freebsd $(GO) build -o /dev/null ./cmd/hoist
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
	@command -v shellcheck >/dev/null || { echo "shellcheck is not installed: run make deps (make test installs it)"; exit 1; }
	shellcheck -s sh shellcmd/sh/*.sh

# The sandbox fleet (docker-compose.yml): three sshd boxes in podman on
# 127.0.0.1:2201-2203 (login shells bash, busybox ash, fish), reached through
# the generated e2e/sandbox/state/ssh_config. `sandbox` builds the image when
# it is missing or stale, generates the keys, ssh_config and known_hosts,
# starts the boxes and waits until each answers; as root.
sandbox: build
	@e2e/sandbox/fleet up

sandbox-down:
	@e2e/sandbox/fleet down

# The e2e sandbox mode against the fleet: up, the Sandbox tests, down. A
# fleet that was up before is left up.
sandbox-test: build
	@was_up=; e2e/sandbox/fleet running && was_up=1; \
	e2e/sandbox/fleet up || { [ -n "$$was_up" ] || e2e/sandbox/fleet down; exit 1; }; \
	status=0; HOIST_SANDBOX=1 $(GO) test -count=1 -v -timeout 5m -run Sandbox ./e2e/ || status=$$?; \
	if [ -n "$$was_up" ]; then echo "sandbox: leaving the fleet up, as it was (make sandbox-down)"; else e2e/sandbox/fleet down; fi; \
	exit $$status

clean:
	rm -rf bin
