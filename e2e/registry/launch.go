package registry

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hoistdev/hoist/e2e/internal/harness"
)

var (
	errPortInUse = errors.New("port in use")
	listening    = regexp.MustCompile(`"msg":"listening on 127\.0\.0\.1:([0-9]+)`)
)

// launch starts docker-registry on r.port (any free port the first time)
// and waits until it serves. r.mu is not held.
func (r *Registry) launch() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := os.WriteFile(r.config, []byte(r.configYAML(r.port)), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(r.bin, "serve", r.config)
	// The registry dies with the test binary, even when that is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p, offset, err := harness.Start(cmd, r.LogPath, "")
	if err != nil {
		return err
	}

	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-p.Done:
			if strings.Contains(harness.ReadFrom(r.LogPath, offset), "address already in use") {
				return errPortInUse
			}
			return fmt.Errorf("docker-registry exited during startup (%v)", cmd.ProcessState)
		case <-time.After(20 * time.Millisecond):
		}
		if m := listening.FindStringSubmatch(harness.ReadFrom(r.LogPath, offset)); m != nil {
			r.port, _ = strconv.Atoi(m[1])
			break
		}
		if time.Now().After(deadline) {
			p.Stop(syscall.SIGKILL)
			return errors.New("docker-registry did not report listening within 20s")
		}
	}
	r.Addr = "127.0.0.1:" + strconv.Itoa(r.port)
	r.URL = "https://" + r.Addr
	if r.opts.PlainHTTP {
		r.URL = "http://" + r.Addr
	}
	if err := r.waitServing(time.Until(deadline)); err != nil {
		p.Stop(syscall.SIGKILL)
		return err
	}
	r.running = p
	return nil
}

// waitServing waits until GET /v2/ answers 200 or 401.
func (r *Registry) waitServing(timeout time.Duration) error {
	c := r.Client()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := c.Get(r.URL + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 || resp.StatusCode == 401 {
				return nil
			}
			err = fmt.Errorf("GET /v2/: %s", resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("docker-registry on %s does not answer: %v", r.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Request is one request the registry answered, from its access log.
type Request struct {
	Method string
	URI    string // path and query, as sent
	Status int
	Bytes  int64 // body bytes the registry sent
}

// accessLine is a line of the access log, in Apache's combined format:
// 127.0.0.1 - - [date] "GET /v2/ HTTP/1.1" 401 87 "referer" "agent".
var accessLine = regexp.MustCompile(`^\S+ \S+ \S+ \[[^]]*\] "(\S+) (\S+) [^"]*" ([0-9]{3}) ([0-9]+|-)`)

// Requests lists the requests the registry has answered so far, in order,
// from its access log: what reached the registry, whoever sent it.
func (r *Registry) Requests() []Request {
	r.t.Helper()
	f, err := os.Open(r.LogPath)
	if err != nil {
		r.t.Fatalf("reading the registry log: %v", err)
	}
	defer f.Close()
	var out []Request
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m := accessLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		status, _ := strconv.Atoi(m[3])
		n, _ := strconv.ParseInt(m[4], 10, 64)
		out = append(out, Request{Method: m[1], URI: m[2], Status: status, Bytes: n})
	}
	return out
}

// dirPrefix names the registry directories in harness.Root.
const dirPrefix = "hoist-registry-"

var sweepOnce sync.Once

// killStale kills what still runs of a registry whose test process died
// without its cleanup: a docker-registry serving dir's config.
func killStale(dir string) error {
	config := []byte(filepath.Join(dir, "config.yml"))
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(cmdline, config) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return nil
}
