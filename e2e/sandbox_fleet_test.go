package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// composeRlimitLog is what podman-compose 1.0.3 (Debian bookworm) printed,
// and how it exited (0), when podman could not start a box: on a VM that
// refuses podman's default RLIMIT_NPROC. The box's container is left
// "created", with an empty log.
const composeRlimitLog = `['podman', 'network', 'exists', 'hoist-sandbox_default']
podman run --name=hoist-sandbox_box1_1 -d --label io.podman.compose.project=hoist-sandbox -p 127.0.0.1:2201:22 --hostname box1 localhost/hoist-sshd /bin/sh /sandbox/boot bash
Error: runc: runc create failed: unable to start container process: error during container init: error setting rlimits for ready process: error setting rlimit type 6: operation not permitted: OCI permission denied
exit code: 126
podman start hoist-sandbox_box1_1
Error: unable to start container "00de3b93c546": runc: runc create failed: unable to start container process: error during container init: error setting rlimits for ready process: error setting rlimit type 6: operation not permitted: OCI permission denied
exit code: 125
`

// TestSandboxUpSaysWhyABoxDidNotStart: when podman cannot start a box,
// e2e/sandbox/fleet up fails saying podman's reason on stderr, not "its log
// above" with nothing above. The engine here is a stand-in that answers as
// podman and podman-compose did on such a VM (composeRlimitLog); the fleet
// script is the real one, run from a copy of its checkout layout so that its
// state/ is the test's own.
func TestSandboxUpSaysWhyABoxDidNotStart(t *testing.T) {
	sshd.RequireRoot(t) // fleet up refuses to run otherwise
	for _, c := range []string{"ssh", "ssh-keygen", "awk", "ldd"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s is not installed: make deps installs it", c)
		}
	}
	t.Parallel()

	top := t.TempDir()
	sandbox := filepath.Join(top, "e2e", "sandbox")
	if err := os.MkdirAll(sandbox, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fleet", "make-image", "boot"} {
		b, err := os.ReadFile(filepath.Join("sandbox", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sandbox, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(sandbox, "compose-said"), []byte(composeRlimitLog), 0o644); err != nil {
		t.Fatal(err)
	}

	// The stand-in engine: the image is there (labelled by this
	// make-image), the probe container runs, no box runs, box1 is left
	// "created" with an empty log.
	bin := filepath.Join(top, "bin")
	shims := map[string]string{
		"podman": `#!/bin/sh
case "$1 $2" in
"image inspect") sha256sum "$TOP/e2e/sandbox/make-image" | cut -c1-16 ;;
"import -") cat >/dev/null ;;
"inspect --format") echo created ;;
esac
exit 0
`,
		"podman-compose": `#!/bin/sh
case " $* " in
*" up "*) cat "$TOP/e2e/sandbox/compose-said" ;;
esac
exit 0
`,
		"runc": "#!/bin/sh\nexit 1\n",
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range shims {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(sandbox, "fleet"), "up")
	cmd.Env = append(os.Environ(),
		"PATH="+bin+":"+os.Getenv("PATH"),
		"TOP="+top,
		"SANDBOX_LOCK="+filepath.Join(top, "lock"),
		"ENGINE=podman", "COMPOSE=podman-compose")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	said := "stdout:\n" + stdout.String() + "stderr:\n" + stderr.String()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("fleet up: %v, want exit status 1\n%s", err, said)
	}
	last := strings.TrimSpace(stderr.String())
	if i := strings.LastIndex(last, "\n"); i >= 0 {
		last = last[i+1:]
	}
	for _, want := range []string{"box1", "error setting rlimit type 6: operation not permitted", "compose.log"} {
		if !strings.Contains(last, want) {
			t.Errorf("fleet up's last line on stderr does not say %q: %q\n%s", want, last, said)
		}
	}
	t.Logf("fleet up failed, as it should, saying: %s", last)
}
