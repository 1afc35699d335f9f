package e2e

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/registry"
	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/store"
)

// What a registry, or a mirror in front of it, can do to a host that
// fetches from it: send more than a blob, redirect it elsewhere, and what
// a host command killed mid-fetch leaves of the credential.

// TestPushViaRefusesAnOversizedBlob: a mirror answers every blob with 32
// MiB more than the blob, chunked (no length to refuse up front). The host
// stops writing the first such blob near its declared size, says it came
// larger than that (NOFETCH size, naming the blob), keeps nothing of it,
// and is sent the runtime over SSH: with curl under dash and under busybox
// ash, with GNU wget and its credential, with busybox wget from a plain
// registry; hoist push's line names the host and the blob.
func TestPushViaRefusesAnOversizedBlob(t *testing.T) {
	t.Parallel()
	const extra = 32 << 20
	e := newViaEnv(t, registry.Options{})
	check := func(t *testing.T, m *registry.Proxy, res *store.PushResult, root, id string, err error) {
		t.Helper()
		if err != nil || !res.Promoted || res.ID != id || !strings.HasPrefix(res.Fallback, "size: blob sha256:") ||
			!strings.Contains(res.Fallback, "larger than its declared size") || res.Uploaded == 0 {
			t.Fatalf("push through a mirror that sends more than each blob: %v %+v; want %s promoted, sent over SSH for size: blob sha256:... larger than its declared size", err, res, id)
		}
		sameTree(t, e.src, filepath.Join(root, "runtimes", id))
		t.Logf("fell back: %s", res.Fallback)
		stoppedEarly(t, m)
	}
	hosts := map[string]sshd.Options{"curl": {}}
	if isRoot() {
		hosts["busybox-curl"] = sshd.Options{Shell: "sh", Busybox: true}
		hosts["wget"] = sshd.Options{Hide: []string{"/usr/bin/curl"}}
	} else {
		t.Log("skipping the hosts with busybox or wget only: they take root")
	}
	for name, opts := range hosts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := e.r.NewProxy(t)
			v := e.via(t, m.Addr)
			m.Grow(extra)
			res, root, err := pushVia(t, e.artifact(t), v, opts)
			check(t, m, res, root, e.id, err)
			if name != "curl" && res.FetchTool != strings.TrimPrefix(name, "busybox-") {
				t.Errorf("fetched with %q; want %s", res.FetchTool, name)
			}
		})
	}
	t.Run("cli", func(t *testing.T) {
		t.Parallel()
		m := e.r.NewProxy(t)
		p := newPublisher(t, dockerFor(t, e.r, m.Addr))
		v := newViaHost(t, p, sshd.Options{})
		m.OnlyFor("curl/")
		m.Grow(extra)
		r := v.c.run("push", e.src, "--name", "app", "--via", "oci://"+m.Addr+"/hoist/app:v1", "--registry-ca", e.r.CAFile)
		host := v.h.User + "@" + v.proxy.Addr
		if r.code != 0 || !strings.Contains(r.stdout, host+": "+e.id) ||
			!strings.Contains(r.stdout, "since the host could not fetch it: size: blob sha256:") || !strings.Contains(r.stdout, "is larger than its declared size") {
			t.Fatalf("push --via a mirror that sends more than each blob: %s\n%s%s; want %s's line to say which blob came larger than its declared size", r, r.stdout, r.stderr, host)
		}
		t.Logf("%s", r.stdout)
		stoppedEarly(t, m)
	})
	if !isRoot() {
		return
	}
	t.Run("busybox-wget", func(t *testing.T) {
		t.Parallel()
		plain := registry.Start(t, registry.Options{Auth: registry.Anonymous, PlainHTTP: true})
		id, _ := newPublisher(t, "").publish(e.src, "oci://"+plain.Addr+"/hoist/app:v1", "--insecure-registry", plain.Addr)
		m := plain.NewProxy(t)
		reg := registryFor(t, store.RegistryOptions{Insecure: []string{m.Addr}, DockerConfig: t.TempDir()})
		v, err := reg.Via(ctxT(t), mustRef(t, "oci://"+m.Addr+"/hoist/app:v1"), store.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m.Grow(extra)
		res, root, err := pushVia(t, e.artifact(t), v, sshd.Options{Shell: "sh", Busybox: true, Hide: []string{"/usr/bin/curl", "/usr/bin/wget"}})
		check(t, m, res, root, id, err)
		if res.FetchTool != "busybox" {
			t.Errorf("fetched with %q; want busybox", res.FetchTool)
		}
	})
}

// stoppedEarly checks that the host stopped reading each blob download m
// answered with more than the blob (Proxy.Grow) near the blob's size.
func stoppedEarly(t *testing.T, m *registry.Proxy) {
	t.Helper()
	grown := 0
	for _, q := range m.Requests() {
		if q.Fault != "grow" {
			continue
		}
		grown++
		t.Logf("%s: %d bytes read", q.URI, q.Bytes)
		// What the mirror got out before the host stopped reading: the
		// blob (256 KiB at most), its cap and the sockets' buffers.
		if q.Bytes >= 16<<20 {
			t.Errorf("the host read %d bytes of %s, answered with more than the blob; want it stopped near the blob's size", q.Bytes, q.URI)
		}
	}
	if grown == 0 {
		t.Error("no blob download was answered with more than the blob")
	}
}

// TestPushViaRedirectKeepsTheCredential: a registry that redirects its
// blob downloads (307) to another host, as one with object storage does.
// curl follows and fetches them there, without the registry's credential
// (that host sees no Authorization); GNU wget, which would send it on,
// follows no redirect with a credential, and the host is sent the bytes
// over SSH instead, the other host never asked.
func TestPushViaRedirectKeepsTheCredential(t *testing.T) {
	t.Parallel()
	e := newViaEnv(t, registry.Options{})
	redirecting := func(t *testing.T) (*store.Via, *registry.BlobStore) {
		m := e.r.NewProxy(t)
		v := e.via(t, m.Addr)
		bs := e.r.NewBlobStore(t)
		m.RedirectTo(bs)
		return v, bs
	}
	t.Run("curl", func(t *testing.T) {
		t.Parallel()
		v, bs := redirecting(t)
		res, root, err := pushVia(t, e.artifact(t), v, sshd.Options{})
		if err != nil || !res.Promoted || res.Fallback != "" || res.Uploaded != 0 || res.FetchTool != "curl" {
			t.Fatalf("push with curl through redirected blobs: %v %+v; want all fetched", err, res)
		}
		sameTree(t, e.src, filepath.Join(root, "runtimes", e.id))
		reqs := bs.Requests()
		if len(reqs) == 0 {
			t.Fatal("the host fetched nothing from where the registry redirected it")
		}
		for _, q := range reqs {
			if q.Authorization != "" {
				scheme, _, _ := strings.Cut(q.Authorization, " ")
				t.Errorf("curl sent the registry's credential on to another host: %s with Authorization: %s ...", q.Path, scheme)
			}
		}
	})
	if !isRoot() {
		t.Log("skipping the host with wget only: hiding programs takes root")
		return
	}
	t.Run("wget", func(t *testing.T) {
		t.Parallel()
		v, bs := redirecting(t)
		res, root, err := pushVia(t, e.artifact(t), v, sshd.Options{Hide: []string{"/usr/bin/curl"}})
		if err != nil || !res.Promoted || res.FetchTool != "wget" || !strings.HasPrefix(res.Fallback, "http:") ||
			!strings.Contains(res.Fallback, "the registry redirected it elsewhere") || res.Uploaded == 0 {
			t.Fatalf("push with wget through redirected blobs: %v %+v; want the redirect refused, the bytes sent over SSH", err, res)
		}
		sameTree(t, e.src, filepath.Join(root, "runtimes", e.id))
		if reqs := bs.Requests(); len(reqs) != 0 {
			t.Errorf("wget followed the redirect with a credential: %+v", reqs)
		}
	})
}

// TestPushViaKilledLeavesNoCredential: a host's fetch, held mid-blob by a
// mirror that stalls, keeps its bearer token under no name: no file on the
// host holds it while the fetch runs, nor once every process of the host
// command is killed with SIGKILL (no trap runs). With curl (the token on a
// pipe) and with GNU wget (its wgetrc unlinked before it holds the token).
func TestPushViaKilledLeavesNoCredential(t *testing.T) {
	if !isRoot() {
		t.Skip("killing the host user's processes takes root")
	}
	t.Parallel()
	e := newViaEnv(t, registry.Options{Auth: registry.Token})
	for tool, opts := range map[string]sshd.Options{"curl": {}, "wget": {Hide: []string{"/usr/bin/curl"}}} {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			m := e.r.NewProxy(t)
			v := e.via(t, m.Addr)
			m.Stall(64 << 10)
			h := sshd.Start(t, opts)
			root := filepath.Join(h.Dir, "store")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := store.New(newLock(t, h, root)).Push(ctx, e.artifact(t), store.PushOptions{Via: v})
				done <- err
			}()
			tokens := e.stalledTokens(t, m)
			dirs := []string{h.Dir, h.Home}
			for _, p := range filesHolding(dirs, tokens) {
				t.Errorf("%s holds the token while the host fetches", p)
			}
			stages, _ := filepath.Glob(filepath.Join(root, "runtimes", ".stage-*"))
			if len(stages) != 1 {
				t.Fatalf("stages during the fetch: %v; want one", stages)
			}
			killed := killIn(t, stages[0])
			if len(killed) == 0 {
				t.Fatal("no process of the host command found in its stage")
			}
			t.Logf("killed %v", killed)
			if err := <-done; err == nil {
				t.Error("the push whose host command was killed succeeded")
			}
			for _, p := range filesHolding(dirs, tokens) {
				t.Errorf("%s holds the token after the host command was killed", p)
			}
		})
	}
}

// filesHolding lists the regular files under dirs that hold any of secrets.
func filesHolding(dirs, secrets []string) []string {
	var found []string
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			data, _ := os.ReadFile(p)
			for _, s := range secrets {
				if bytes.Contains(data, []byte(s)) {
					found = append(found, p)
					break
				}
			}
			return nil
		})
	}
	return found
}

// killIn kills with SIGKILL every process whose working directory is dir
// (a host command in its stage, and the tools it runs), until none is
// left, and returns their pids and names.
func killIn(t *testing.T, dir string) []string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	var killed []string
	for range 50 {
		n := 0
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range procs {
			if cwd, err := os.Readlink(filepath.Join(p, "cwd")); err != nil || cwd != dir {
				continue
			}
			pid, err := strconv.Atoi(filepath.Base(p))
			if err != nil {
				continue
			}
			comm, _ := os.ReadFile(filepath.Join(p, "comm"))
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
				killed = append(killed, filepath.Base(p)+" "+strings.TrimSpace(string(comm)))
			}
		}
		if n == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return killed
}
