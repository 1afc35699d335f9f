package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/registry"
	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/store"
)

// viaEnv is a registry with a runtime published to it, a mirror in front
// of it that damages blob downloads on demand (registry.Proxy), and a TCP
// relay in front of it that can refuse connections (sshd.Proxy): the
// workstation reads the runtime through either before the fault is set,
// so that only the host meets it.
type viaEnv struct {
	r      *registry.Registry
	mirror *registry.Proxy
	relay  *sshd.Proxy
	src    string
	id     string
	ref    store.OCIRef // the runtime by digest, at the registry
	docker string       // docker's configuration, for the registry, the mirror and the relay
}

func newViaEnv(t *testing.T, opts registry.Options) *viaEnv {
	t.Helper()
	r := registry.Start(t, opts)
	e := &viaEnv{r: r, mirror: r.NewProxy(t), relay: sshd.NewProxy(t, r.Addr), src: deltaTree(t, 16, 256<<10)}
	e.docker = dockerFor(t, r, e.mirror.Addr, e.relay.Addr)
	p := newPublisher(t, e.docker)
	e.id, e.ref = p.publish(e.src, "oci://"+r.Addr+"/hoist/app:v1", "--registry-ca", r.CAFile)
	return e
}

// dockerFor is a docker configuration with the user's credentials for r
// under its own name and each of names (a mirror's, a relay's).
func dockerFor(t *testing.T, r *registry.Registry, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(r.User + ":" + r.Password))
	auths := map[string]any{}
	for _, a := range append([]string{r.Addr}, names...) {
		auths[a] = map[string]string{"auth": auth}
	}
	data, _ := json.Marshal(map[string]any{"auths": auths})
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// via reads the runtime through addr (the registry's, the mirror's or the
// relay's), as a workstation does before it pushes.
func (e *viaEnv) via(t *testing.T, addr string) *store.Via {
	t.Helper()
	reg := registryFor(t, store.RegistryOptions{CAFile: e.r.CAFile, DockerConfig: dockerFor(t, e.r, addr)})
	ref := e.ref
	ref.Registry = addr
	v, err := reg.Via(ctxT(t), ref, store.ReadOptions{})
	if err != nil {
		t.Fatalf("reading %s: %v", ref, err)
	}
	return v
}

func (e *viaEnv) artifact(t *testing.T) *store.Artifact {
	t.Helper()
	a, err := store.OpenWith(ctxT(t), e.src, store.OpenOptions{Name: "app"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// pushVia pushes through v to a new host (a nil a: push oci://).
func pushVia(t *testing.T, a *store.Artifact, v *store.Via, opts sshd.Options) (*store.PushResult, string, error) {
	t.Helper()
	h := sshd.Start(t, opts)
	root := filepath.Join(h.Dir, "store")
	res, err := store.New(newLock(t, h, root)).Push(ctxT(t), a, store.PushOptions{Via: v})
	return res, root, err
}

// TestPushViaFallsBack: a host that cannot fetch from the registry, for
// whatever reason, is sent over SFTP what it lacks and ends with the right
// runtime, saying why: the registry refuses its connections (reach, within
// a second of the try) or answers nothing (reach, once the 5 s connect
// timeout ends), a mirror serves a blob with a wrong byte (digest:
// that blob is never used), or it has neither curl nor wget (tool). A
// mirror that cuts downloads mid-blob is no failure: the host resumes each with
// a Range request, with curl or with wget. Without the artifact (push oci://), the workstation
// fetches what the host could not from the registry and sends it, and a
// tampered blob is refused there too: nothing is promoted.
func TestPushViaFallsBack(t *testing.T) {
	t.Parallel()
	e := newViaEnv(t, registry.Options{})
	check := func(t *testing.T, res *store.PushResult, root string, err error, why string) {
		t.Helper()
		if err != nil || !res.Promoted || res.ID != e.id || !strings.HasPrefix(res.Fallback, why) {
			t.Fatalf("push: %v %+v; want %s promoted, fallen back for %q", err, res, e.id, why)
		}
		sameTree(t, e.src, filepath.Join(root, "runtimes", e.id))
	}
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		v := e.via(t, e.relay.Addr)
		e.relay.Refuse()
		start := time.Now()
		res, root, err := pushVia(t, e.artifact(t), v, sshd.Options{})
		check(t, res, root, err, "reach:")
		if res.Uploaded < 4<<20 || res.Fetched != 0 {
			t.Errorf("sent %d bytes, fetched %d blobs; want the whole runtime sent", res.Uploaded, res.Fetched)
		}
		t.Logf("fell back in a push of %v: %s", time.Since(start).Round(time.Millisecond), res.Fallback)
	})
	t.Run("silent", func(t *testing.T) {
		t.Parallel()
		relay := sshd.NewProxy(t, e.r.Addr)
		v := e.via(t, relay.Addr)
		relay.Freeze()
		start := time.Now()
		res, root, err := pushVia(t, e.artifact(t), v, sshd.Options{})
		check(t, res, root, err, "reach:")
		t.Logf("fell back in a push of %v: %s", time.Since(start).Round(time.Millisecond), res.Fallback)
	})
	t.Run("tampered", func(t *testing.T) {
		t.Parallel()
		m := e.r.NewProxy(t)
		v := e.via(t, m.Addr)
		m.Corrupt()
		res, root, err := pushVia(t, e.artifact(t), v, sshd.Options{})
		check(t, res, root, err, "digest:")
		if !strings.Contains(res.Fallback, "tampered") {
			t.Errorf("the fallback says %q; want it to name a tampered mirror", res.Fallback)
		}
	})
	t.Run("cut", func(t *testing.T) {
		t.Parallel()
		m := e.r.NewProxy(t)
		v := e.via(t, m.Addr)
		m.Cut(64<<10, 2)
		res, root, err := pushVia(t, e.artifact(t), v, sshd.Options{})
		if err != nil || !res.Promoted || res.Fallback != "" || res.FetchResumes != 2 || res.Uploaded != 0 {
			t.Fatalf("push through a mirror that cuts 2 downloads: %v %+v; want each resumed, nothing sent", err, res)
		}
		sameTree(t, e.src, filepath.Join(root, "runtimes", e.id))
		var ranges []string
		for _, q := range m.Requests() {
			if q.Range != "" {
				ranges = append(ranges, q.Range)
			}
		}
		// The first cut download goes on from 64 KiB; the second cut is
		// that request's, or the next blob's.
		if len(ranges) != 2 || ranges[0] != "bytes=65536-" || !strings.HasPrefix(ranges[1], "bytes=") {
			t.Errorf("requests with Range: %q; want 2, the first from 65536", ranges)
		}
	})
	t.Run("oci-tampered", func(t *testing.T) {
		t.Parallel()
		m := e.r.NewProxy(t)
		v := e.via(t, m.Addr)
		m.Corrupt()
		res, root, err := pushVia(t, nil, v, sshd.Options{})
		if !errors.Is(err, store.ErrPublished) || res.Promoted {
			t.Fatalf("push oci:// through a tampering mirror: %v %+v; want it refused, nothing promoted", err, res)
		}
		if _, err := os.Lstat(filepath.Join(root, "runtimes", e.id)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("runtimes/%s: %v; want none", e.id, err)
		}
	})
	if !isRoot() {
		t.Log("skipping the hosts without curl and wget: hiding programs takes root")
		return
	}
	hide := sshd.Options{Hide: []string{"/usr/bin/curl", "/usr/bin/wget"}}
	t.Run("no-tool", func(t *testing.T) {
		t.Parallel()
		res, root, err := pushVia(t, e.artifact(t), e.via(t, e.r.Addr), hide)
		check(t, res, root, err, "tool:")
	})
	t.Run("cut-wget", func(t *testing.T) {
		t.Parallel()
		m := e.r.NewProxy(t)
		v := e.via(t, m.Addr)
		m.Cut(64<<10, 1)
		res, root, err := pushVia(t, e.artifact(t), v, sshd.Options{Hide: []string{"/usr/bin/curl"}})
		if err != nil || !res.Promoted || res.Fallback != "" || res.FetchTool != "wget" || res.FetchResumes != 1 || res.Uploaded != 0 {
			t.Fatalf("push with wget through a mirror that cuts a download: %v %+v; want it resumed, nothing sent", err, res)
		}
		sameTree(t, e.src, filepath.Join(root, "runtimes", e.id))
		if q := m.Requests(); !slices.ContainsFunc(q, func(q registry.ProxyRequest) bool { return q.Range == "bytes=65536-" }) {
			t.Errorf("no request went on from the cut with Range: bytes=65536-: %+v", q)
		}
	})
	t.Run("oci-no-tool", func(t *testing.T) {
		t.Parallel()
		res, root, err := pushVia(t, nil, e.via(t, e.r.Addr), hide)
		check(t, res, root, err, "tool:")
		if !res.FromRegistry {
			t.Errorf("%+v: want the bytes sent from the registry", res)
		}
	})
	t.Run("cli", func(t *testing.T) {
		t.Parallel()
		p := newPublisher(t, e.docker)
		v := newViaHost(t, p, hide)
		r := v.c.run("push", e.ref.String(), "--registry-ca", e.r.CAFile)
		if r.code != 0 || !strings.Contains(r.stdout, "over SSH, fetched from the registry by this machine, since the host could not fetch it: tool: neither curl nor wget") {
			t.Fatalf("push %s to a host without curl or wget: %s", e.ref, r)
		}
		sameTree(t, e.src, filepath.Join(v.root, "runtimes", e.id))
	})
}

// TestPushViaTokenStaysOffArgv: with a registry that issues bearer tokens,
// each host is given one scoped to pull the repository, inside its
// command's standard input. While the host's fetch is held mid-blob (a
// mirror stalls it), no process on the machine has any token the server
// issued in its argv or environment, and no file under the host's
// directories holds one, then or once the push is over. The stalled blob
// is then resumed. With curl (-K - on a pipe) and with GNU wget (a wgetrc
// unlinked before it holds the token; TestPushViaKilledLeavesNoCredential
// kills such a fetch).
func TestPushViaTokenStaysOffArgv(t *testing.T) {
	t.Parallel()
	e := newViaEnv(t, registry.Options{Auth: registry.Token})
	tools := map[string]sshd.Options{"curl": {}}
	if isRoot() {
		tools["wget"] = sshd.Options{Hide: []string{"/usr/bin/curl"}}
	} else {
		t.Log("skipping the host with wget only: hiding programs takes root")
	}
	for tool, opts := range tools {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			tokenStaysOff(t, e, tool, opts)
		})
	}
}

func tokenStaysOff(t *testing.T, e *viaEnv, tool string, opts sshd.Options) {
	m := e.r.NewProxy(t)
	v := e.via(t, m.Addr)
	m.Stall(64 << 10)
	h := sshd.Start(t, opts)
	root := filepath.Join(h.Dir, "store")
	type result struct {
		res *store.PushResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := store.New(newLock(t, h, root)).Push(context.Background(), e.artifact(t), store.PushOptions{Via: v})
		done <- result{res, err}
	}()
	tokens := e.stalledTokens(t, m)
	for _, tok := range tokens {
		if found := processesHolding(tok); len(found) > 0 {
			t.Errorf("a token is in the argv or environment of %v", found)
		}
	}
	for _, p := range filesHolding([]string{h.Dir, h.Home}, tokens) {
		t.Errorf("%s holds a token during the fetch", p)
	}
	m.Clear()
	r := <-done
	if r.err != nil || !r.res.Promoted || r.res.Fallback != "" || r.res.FetchTool != tool || r.res.FetchResumes < 1 {
		t.Fatalf("push: %v %+v; want it fetched with %s, the stalled blob resumed", r.err, r.res, tool)
	}
	sameTree(t, e.src, filepath.Join(root, "runtimes", e.id))
	for _, p := range filesHolding([]string{h.Dir, h.Home}, tokens) {
		t.Errorf("%s holds a token after the push", p)
	}
}

// stalledTokens waits (a minute at most) until a blob download through m
// has reached its stall, and returns the tokens the registry's token
// server issued so far (at least one).
func (e *viaEnv) stalledTokens(t *testing.T, m *registry.Proxy) []string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !stalled(m) {
		if time.Now().After(deadline) {
			t.Fatal("no blob download reached the stall")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var tokens []string
	for _, is := range e.r.Issued() {
		tokens = append(tokens, is.Token)
	}
	if len(tokens) == 0 {
		t.Fatal("the token server issued no token")
	}
	return tokens
}

// stalled reports whether a download through m has reached its stall.
func stalled(m *registry.Proxy) bool {
	for _, q := range m.Requests() {
		if q.Fault == "stall" && q.Bytes >= 64<<10 {
			return true
		}
	}
	return false
}

// processesHolding lists the processes on this machine (the hosts are on
// it) whose argv or environment holds secret.
func processesHolding(secret string) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		for _, file := range []string{"cmdline", "environ"} {
			data, err := os.ReadFile(filepath.Join(dir, file))
			if err == nil && bytes.Contains(data, []byte(secret)) {
				cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
				found = append(found, filepath.Base(dir)+" "+file+": "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
			}
		}
	}
	return found
}
