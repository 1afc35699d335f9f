package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/e2e/registry"
	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/store"
)

// TestPushViaTools: a host fetches with the tool it has, under the shell
// and userland it has: curl under busybox's userland, GNU wget where curl
// is missing (its credential in an unlinked wgetrc), busybox's wget for
// a plain HTTP registry that needs no credential; busybox's wget is not
// used for a registry over TLS (it would verify no certificate), and that
// host is sent the bytes instead. Each ends with the runtime.
func TestPushViaTools(t *testing.T) {
	if !isRoot() {
		t.Skip("hiding programs and busybox hosts take root")
	}
	t.Parallel()
	tlsEnv := newViaEnv(t, registry.Options{})
	plain := registry.Start(t, registry.Options{Auth: registry.Anonymous, PlainHTTP: true})
	p := newPublisher(t, "")
	plainID, plainRef := p.publish(tlsEnv.src, "oci://"+plain.Addr+"/hoist/app:v1", "--insecure-registry", plain.Addr)
	if plainID != tlsEnv.id {
		t.Fatalf("published %s to the plain registry, %s to the other", plainID, tlsEnv.id)
	}
	plainVia := func(t *testing.T) *store.Via {
		reg := registryFor(t, store.RegistryOptions{Insecure: []string{plain.Addr}, DockerConfig: t.TempDir()})
		v, err := reg.Via(ctxT(t), plainRef, store.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	noWget := []string{"/usr/bin/curl", "/usr/bin/wget"}
	for _, tc := range []struct {
		name     string
		opts     sshd.Options
		plain    bool
		tool     string
		fallback string
	}{
		{"busybox-curl", sshd.Options{Shell: "sh", Busybox: true}, false, "curl", ""},
		{"gnu-wget", sshd.Options{Hide: []string{"/usr/bin/curl"}}, false, "wget", ""},
		{"busybox-wget-plain", sshd.Options{Shell: "sh", Busybox: true, Hide: noWget}, true, "busybox", ""},
		{"busybox-wget-tls", sshd.Options{Shell: "sh", Busybox: true, Hide: noWget}, false, "", "tool: only busybox wget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := tlsEnv.via(t, tlsEnv.r.Addr)
			if tc.plain {
				v = plainVia(t)
			}
			res, root, err := pushVia(t, tlsEnv.artifact(t), v, tc.opts)
			if err != nil || !res.Promoted || res.FetchTool != tc.tool || !strings.HasPrefix(res.Fallback, tc.fallback) || (tc.fallback == "") != (res.Uploaded == 0) {
				t.Fatalf("push: %v %+v; want it promoted, fetched with %q, fallen back for %q", err, res, tc.tool, tc.fallback)
			}
			sameTree(t, tlsEnv.src, filepath.Join(root, "runtimes", tlsEnv.id))
		})
	}
}
