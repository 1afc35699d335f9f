# The common commands. `make test` works on a fresh Debian or Ubuntu machine:
# it installs what the tests need, then runs every test.

GO      ?= go
SUDO    := $(shell [ "$$(id -u)" = 0 ] || command -v sudo >/dev/null && [ "$$(id -u)" != 0 ] && echo sudo)
# Packages the tests need: real OpenSSH, the login shells hoist is tested
# under, busybox for a busybox userland, util-linux for namespaces, acl for
# stores with ACLs, xz, zstd and zip for archives users have, sshfs for a
# file system without change times, shellcheck for make lint, podman,
# podman-compose, runc (podman would bring crun, which machines with hybrid
# cgroups refuse) and debootstrap for the sandbox fleet, docker-registry
# (CNCF distribution) for a real OCI registry, curl, wget and openssl,
# the tools hosts fetch from it with (busybox wget runs openssl for https),
# and strace, which counts the processes a host starts (make bench).
TEST_DEBS := openssh-server openssh-client zsh fish tcsh mksh busybox util-linux procps iproute2 acl xz-utils zstd zip sshfs shellcheck podman podman-compose runc debootstrap docker-registry curl wget openssl strace
TEST_CMDS := sshd ssh ssh-keygen zsh fish tcsh mksh busybox unshare ps setfacl xz zstd zip sshfs shellcheck podman podman-compose runc debootstrap docker-registry curl wget openssl strace

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
		$(SUDO) apt-get -o DPkg::Lock::Timeout=300 update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends $(TEST_DEBS) >/dev/null || exit 1; \
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

# Then the sandbox fleet test (make sandbox-test), as root, which CI is; it
# fails when the fleet does not come up. Skipped, with the reason, only off
# root (rootful podman) and in a container where podman cannot run containers
# (read-only cgroups, overlay on overlay): a machine runs it.
test: deps lint unit e2e
	@if [ "$$(id -u)" != 0 ]; then echo "make test: not root: the sandbox fleet test is skipped (it needs rootful podman: sudo make sandbox-test)"; \
	elif ! why=$$(e2e/sandbox/fleet check 2>&1) && { [ -e /run/.containerenv ] || [ -e /.dockerenv ]; }; then \
		echo "make test: this is a container where podman cannot run containers ($$why): the sandbox fleet test is skipped (a machine runs it: make sandbox-test)"; \
	else $(MAKE) --no-print-directory sandbox-test; fi

unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v /e2e)

# End to end against real sshd. Most tests wait on hosts rather than burn
# CPU, so more of them run at once than there are cores.
e2e:
	$(GO) test -race -count=1 -parallel 8 -timeout 20m ./e2e/...

# The quick ones (a warm run, a status, a session on a kept connection,
# the host CPU of a run) take 50 iterations, which this machine's noise
# needs; the others 5 (ScriptRoundTrips: the 4-command script with and
# without ControlPersist; HostCPUPush and HostProcs: what a host spends on
# each command, in CPU time (as root: each host in a cgroup of its own) and
# in processes).
bench: deps
	$(GO) test -run '^$$' -bench 'RunUncontended|Status|MuxSession|HostCPURun' -benchtime 50x ./e2e/
	$(GO) test -run '^$$' -bench . -skip 'RunUncontended|Status|MuxSession|HostCPURun' -benchtime 5x ./e2e/

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
# fleet that was up before is left up. One fleet sequence runs at a time on a
# machine (the boxes' names and ports are the machine's).
sandbox-test: build
	@GO=$(GO) e2e/sandbox/fleet test

clean:
	rm -rf bin
