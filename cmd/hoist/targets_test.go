package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestTargetsPassThrough: targets reach the transport as given, whatever
// their form (ssh://user@host:port, IPv6 in brackets): -H
// and --hosts-file split lists at commas only, and drop repeats.
func TestTargetsPassThrough(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(file, []byte("# fleet\nssh://ops@db1.example.com:2200\n\nweb1, alias-from-ssh-config\n"), 0o600)
	a := newApp(nil, nil, nil)
	err := a.rootCommand().PersistentFlags().Parse([]string{
		"-H", "ssh://deploy@web1:2222,bob@[::1]:2222", "-Hssh://[fe80::1]", "--host=web1", "--hosts-file", file,
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.targets()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ssh://deploy@web1:2222", "bob@[::1]:2222", "ssh://[fe80::1]", "web1",
		"ssh://ops@db1.example.com:2200", "alias-from-ssh-config"}
	if !slices.Equal(got, want) {
		t.Fatalf("targets %q, want %q", got, want)
	}
	for _, target := range got {
		if cfg, err := a.sshConfig(target); err != nil || cfg.Target != target {
			t.Errorf("sshConfig(%q): target %q, %v", target, cfg.Target, err)
		}
	}
}
