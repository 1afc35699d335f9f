package e2e

import (
	"strings"
	"testing"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/registry"
	"github.com/hoistdev/hoist/e2e/sshd"
)

// TestDoctorReachesTheRegistry: doctor --via asks each host whether it
// reaches the registry as a push through it would fetch: a host with curl
// reaches it over TLS with the CA of --registry-ca (ok, curl, a time), as
// does a host with GNU wget only; a
// host asked to reach an address that refuses connections, and one with
// neither curl nor wget, fail with why, and doctor exits 1.
func TestDoctorReachesTheRegistry(t *testing.T) {
	t.Parallel()
	r := registry.Start(t, registry.Options{Auth: registry.Token})
	refused := sshd.NewProxy(t, r.Addr)
	refused.Refuse()
	p := newPublisher(t, r.DockerConfig())
	item := func(t *testing.T, v *viaHost, addr string, code int) output.Check {
		t.Helper()
		res := v.c.run("--json", "doctor", "--via", "oci://"+addr+"/hoist/app", "--registry-ca", r.CAFile)
		if res.code != code {
			t.Fatalf("doctor --via %s: %s; want exit %d", addr, res, code)
		}
		out := decodeOne[output.Doctor](t, "doctor --json", res.stdout)
		for _, c := range out.Checks {
			if c.Name == "registry" {
				return c
			}
		}
		t.Fatalf("doctor --via: no registry item: %s", res.stdout)
		return output.Check{}
	}
	t.Run("reached", func(t *testing.T) {
		t.Parallel()
		c := item(t, newViaHost(t, p, sshd.Options{}), r.Addr, 0)
		if c.Status != "ok" || c.Value != "curl" || !strings.Contains(c.Detail, "HTTP 401 in ") {
			t.Errorf("registry item: %+v; want ok, curl, its 401 and the time", c)
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		c := item(t, newViaHost(t, p, sshd.Options{}), refused.Addr, 1)
		if c.Status != "fail" || c.Value != "curl" || !strings.Contains(c.Detail, "could not reach") || c.Fix == "" {
			t.Errorf("registry item: %+v; want fail, curl, could not reach, and a fix", c)
		}
	})
	if !isRoot() {
		t.Log("skipping the host without curl and wget: hiding programs takes root")
		return
	}
	t.Run("wget", func(t *testing.T) {
		t.Parallel()
		c := item(t, newViaHost(t, p, sshd.Options{Hide: []string{"/usr/bin/curl"}}), r.Addr, 0)
		if c.Status != "ok" || c.Value != "wget" || !strings.Contains(c.Detail, "HTTP 401 in ") {
			t.Errorf("registry item: %+v; want ok, wget, its 401", c)
		}
	})
	t.Run("no-tool", func(t *testing.T) {
		t.Parallel()
		c := item(t, newViaHost(t, p, sshd.Options{Hide: []string{"/usr/bin/curl", "/usr/bin/wget"}}), r.Addr, 1)
		if c.Status != "fail" || !strings.Contains(c.Detail, "neither curl nor wget") {
			t.Errorf("registry item: %+v; want fail, neither curl nor wget", c)
		}
	})
}
