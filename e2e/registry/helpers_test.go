package registry

import (
	"bytes"
	"crypto/rand"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// command is a finished run of a program.
type command struct {
	stdout, stderr string
	code           int // exit status; -1 when killed
}

// run runs name with args and stdin from this machine, with env added to
// the environment.
func run(t *testing.T, env []string, stdin, name string, args ...string) command {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	c := command{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		c.code = exit.ExitCode()
	default:
		t.Fatalf("running %s: %v", name, err)
	}
	return c
}

// curl runs curl -sS with the registry's CA and the given arguments,
// writing the response headers to a file it parses.
func curl(t *testing.T, r *Registry, stdin string, args ...string) (http.Header, int, command) {
	t.Helper()
	headers := filepath.Join(t.TempDir(), "headers")
	// HTTP/1.1, as hosts fetch (shellcmd/sh/fetchget.sh): curl 7.88
	// over the registry's HTTP/2 now and then ends a stream with a framing
	// error (exit 92) on a 202 without a body.
	base := []string{"-sS", "--http1.1", "-D", headers}
	if r.CAFile != "" {
		base = append(base, "--cacert", r.CAFile)
	}
	c := run(t, nil, stdin, "curl", append(base, args...)...)
	raw, _ := os.ReadFile(headers)
	status, h := parseHeaders(raw)
	return h, status, c
}

// parseHeaders reads the status and headers of the last response in
// curl's -D output (earlier ones are 401s or redirects).
func parseHeaders(raw []byte) (int, http.Header) {
	status, h := 0, http.Header{}
	for _, line := range strings.Split(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n") {
		if strings.HasPrefix(line, "HTTP/") {
			status, h = 0, http.Header{}
			if f := strings.Fields(line); len(f) >= 2 {
				status, _ = strconv.Atoi(f[1])
			}
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return status, h
}

func randomBlob(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
