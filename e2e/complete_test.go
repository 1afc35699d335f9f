package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// TestCompletionThroughSSHConfig: completing the runtimes of -H ALIAS
// reaches the host as every other command does: through the OpenSSH
// configuration (a ProxyJump through a bastion, whose sshd logs the login,
// the IdentityFile and port it names) and the -F, -J and -o of the line
// being completed. It offers only names hoist could have given: runtimes
// the host lists under a name or an id with characters a shell acts on,
// or a tab that would forge a description, are left out, in the candidates
// hoist prints and in what bash (without bash-completion) and fish offer.
func TestCompletionThroughSSHConfig(t *testing.T) {
	t.Parallel()
	target := sshd.Start(t, sshd.Options{})
	bastion := sshd.Start(t, sshd.Options{})
	root := filepath.Join(target.Dir, "store")
	jumpCfg := writeConfig(t, hostBlock("app", target, "ProxyJump bastion"), hostBlock("bastion", bastion))
	plainCfg := writeConfig(t, hostBlock("app", target), hostBlock("bastion", bastion),
		strings.Join([]string{"Host noport", "  HostName 127.0.0.1", "  User " + target.User,
			"  IdentityFile " + target.KeyFile, "  IdentitiesOnly yes", "  UserKnownHostsFile " + target.KnownHosts}, "\n"))

	src := filepath.Join(t.TempDir(), "web")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("web\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := sshConfigCLI(t, jumpCfg, root)
	r := c.run("-q", "-H", "app", "push", src, "--name", "web")
	id := regexp.MustCompile(`web-[0-9a-f]{12}`).FindString(r.stdout)
	if r.code != 0 || id == "" {
		t.Fatalf("push: %s", r)
	}
	// What a host, or another member of a group store, can list: a
	// name that runs a command, one with a tab, an id hoist never makes.
	hostSh(t, target, `set -e; s=`+shq(root)+`/runtimes
		for i in evil-0123456789ab tabbed-0123456789ab plain; do mkdir "$s/$i"; done
		printf 'name=x$(touch PWNED)y\nsize=1\npromoted=1\n' >"$s/.meta/evil-0123456789ab"
		printf 'name=tabbed\tfake description\nsize=1\npromoted=1\n' >"$s/.meta/tabbed-0123456789ab"
		printf 'name=plain\nsize=1\npromoted=1\n' >"$s/.meta/plain"`)

	want := func(t *testing.T, what, out string) {
		t.Helper()
		if !regexp.MustCompile(`(?m)^<?`+id+`\b`).MatchString(out) || !regexp.MustCompile(`(?m)^<?web\b`).MatchString(out) {
			t.Errorf("%s: want %s and web among the candidates:\n%s", what, id, out)
		}
		for _, bad := range []string{"evil", "PWNED", "tabbed", "fake", "plain"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: offers %q:\n%s", what, bad, out)
			}
		}
	}
	for _, tc := range []struct {
		name  string
		flags []string
		jump  bool
	}{
		{"ProxyJump in the configuration", []string{"-F", jumpCfg, "-H", "app"}, true},
		{"-J on the command line", []string{"-F", plainCfg, "-J", "bastion", "-H", "app"}, true},
		{"-o Port on the command line", []string{"-F", plainCfg, "-o", fmt.Sprintf("Port=%d", target.Port), "-H", "noport"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := accepted(t, bastion)
			args := append(append([]string{"__complete"}, tc.flags...), "activate", "")
			r := (&cli{t: t, home: t.TempDir(), flags: []string{"--root", root}}).run(args...)
			if r.code != 0 || !strings.HasSuffix(r.stdout, ":4\n") {
				t.Fatalf("hoist %s: %s", strings.Join(args, " "), r)
			}
			want(t, "hoist __complete", r.stdout)
			if tc.jump {
				waitFor(t, 5*time.Second, "the bastion logs the login", func() bool { return accepted(t, bastion) > before })
			}
		})
	}

	// The shells themselves, from the scripts hoist prints.
	dir := t.TempDir()
	env := []string{"HOME=" + t.TempDir(), "PATH=" + filepath.Dir(hoistBin) + ":" + os.Getenv("PATH"), "HOIST_ROOT=" + root}
	shell := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		return string(out)
	}
	line := []string{"hoist", "-F", jumpCfg, "-H", "app", "activate", ""}
	drive := filepath.Join(dir, "drive.bash")
	if err := os.WriteFile(drive, []byte(driveBash), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, "bash", shell("bash", append([]string{"--norc", "--noprofile", drive, strings.Join(line, " ")}, line...)...))
	want(t, "fish", shell("fish", "--no-config", "-c",
		"hoist completion fish | source; complete -C "+shq(strings.Join(line, " "))))
	if left, _ := filepath.Glob(filepath.Join(dir, "PWNED")); len(left) > 0 {
		t.Errorf("a shell ran the host's name: %s exists", left[0])
	}
}

// driveBash LINE WORD...: what bash offers at a TAB at the end of LINE,
// which bash split into WORDs, one <candidate> a line; bash-completion is
// not loaded (bash --norc), and compopt works only in a real completion.
const driveBash = `source <(hoist completion bash) || exit 9
enable -n compopt
COMP_LINE=$1 COMP_POINT=${#1} COMP_TYPE=9 COMP_KEY=9
shift
COMP_WORDS=("$@") COMP_CWORD=$(($# - 1))
__start_hoist hoist "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '<%s>\n' "${COMPREPLY[@]}"
`
