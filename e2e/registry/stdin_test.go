package registry

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tokenRecipe is a host-side fetch of one blob that reads a bearer token
// on standard input. The script gets the blob's URL, the CA file and the
// output file as $1, $2 and $3; it runs under /bin/sh.
type tokenRecipe struct {
	name   string
	script string
	argv   bool // the token shows in some process's argv (the recipe is a counterexample)
}

var tokenRecipes = []tokenRecipe{
	// curl reads its options from stdin (-K -): the header never is an
	// argument. printf is a shell builtin, so no process has it either.
	{name: "curl -K -", script: `IFS= read -r token
printf 'header = "Authorization: Bearer %s"\n' "$token" | curl -sS -f --cacert "$2" -K - -o "$3" "$1"`},
	// GNU wget reads headers from a wgetrc, which must be a regular file
	// (a pipe is refused: "Exiting due to error in /dev/stdin"). The file
	// is unlinked while still empty and written through the descriptor;
	// wget opens it again as /dev/fd/3, which Linux allows for an unlinked
	// file.
	{name: "wget --config=/dev/fd/3", script: `IFS= read -r token
umask 077
f=$(mktemp) || exit 1
exec 3<>"$f"
rm -f "$f"
printf 'header = Authorization: Bearer %s\n' "$token" >&3
wget -q --tries=1 --config=/dev/fd/3 --ca-certificate="$2" -O "$3" "$1"`},
	// openssl s_client speaks TLS and the shell speaks HTTP/1.0: the
	// request is written by printf, the status line and headers are read
	// by the read builtin (one byte at a time from a pipe, so the body is
	// left whole for cat).
	{name: "openssl s_client", script: `IFS= read -r token
hostport=${1#https://}; hostport=${hostport%%/*}; path=/${1#https://*/}
printf 'GET %s HTTP/1.0\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n' "$path" "$hostport" "$token" |
	SSL_CERT_FILE=$2 openssl s_client -quiet -connect "$hostport" -verify_return_error -verify_ip "${hostport%:*}" 2>/dev/null | {
	cr=$(printf '\r')
	IFS= read -r status
	case $status in "HTTP/1."?" 200 "*) ;; *) exit 1 ;; esac
	while IFS= read -r line && [ "$line" != "$cr" ]; do :; done
	cat >"$3"
}`},
	// busybox wget takes headers only as arguments: anyone on the host can
	// read the token in ps while it runs.
	{name: "busybox wget --header", argv: true, script: `IFS= read -r token
SSL_CERT_FILE=$2 busybox wget -q --header "Authorization: Bearer $token" -O "$3" "$(echo "$1" | sed 's,//127.0.0.1:,//localhost:,')"`},
}

// TestTokenOnStdinNeverInArgv runs each recipe twice through a proxy: once
// to fetch the blob, once stalled mid-blob while every process's argv and
// environment are searched for the token, and the temporary directory for
// any file.
func TestTokenOnStdinNeverInArgv(t *testing.T) {
	t.Parallel()
	r := Start(t, Options{Auth: Token})
	data := randomBlob(t, 200000)
	digest := r.PushBlob(t, "hoist/a", data)
	for _, rc := range tokenRecipes {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			token := r.Token("repository:hoist/a:pull") // its own, so the search finds this recipe's only
			p := r.NewProxy(t)
			blobURL := p.URL + "/v2/hoist/a/blobs/" + digest
			tmp := t.TempDir()
			out := filepath.Join(t.TempDir(), "blob")
			recipe := func() *exec.Cmd {
				cmd := exec.Command("/bin/sh", "-c", rc.script, "sh", blobURL, r.CAFile, out)
				cmd.Stdin = strings.NewReader(token + "\n")
				cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
				return cmd
			}

			if b, err := recipe().CombinedOutput(); err != nil || !bytes.Equal(readFile(t, out), data) {
				t.Fatalf("fetch: %v, %d bytes\n%s", err, len(readFile(t, out)), b)
			}

			p.Stall(1000)
			cmd := recipe()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			defer func() { p.Clear(); <-done }()
			waitStalled(t, p, done, &stderr)

			found := processesHolding(token)
			switch {
			case rc.argv && len(found) == 0:
				t.Errorf("no process shows the token, though this recipe passes it as an argument: the search is broken")
			case !rc.argv && len(found) > 0:
				t.Errorf("the token shows in: %s", strings.Join(found, "; "))
			}
			if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
				t.Errorf("files in TMPDIR during the fetch: %v", entries)
			}
			p.Clear()
			<-done
			if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
				t.Errorf("files left in TMPDIR: %v", entries)
			}
		})
	}
}

// waitStalled waits until the proxy holds a blob download after its first
// bytes.
func waitStalled(t *testing.T, p *Proxy, done <-chan struct{}, stderr *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, q := range p.Requests() {
			if q.Fault == "stall" && q.Bytes == 1000 {
				return
			}
		}
		select {
		case <-done:
			t.Fatalf("the fetch ended before the stall: %s", stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no stalled download after 10 s: %+v", p.Requests())
		}
	}
}

// processesHolding lists the processes whose argv or environment contains
// secret.
func processesHolding(secret string) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		for _, file := range []string{"cmdline", "environ"} {
			data, err := os.ReadFile(filepath.Join(dir, file))
			if err == nil && bytes.Contains(data, []byte(secret)) {
				cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
				found = append(found, fmt.Sprintf("pid %s %s: %.60q", filepath.Base(dir), file, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
			}
		}
	}
	return found
}
