package lock_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeLibraryIsTheExample: the README's library snippet is
// ExampleLock_Run, which go test runs: its imports and its body from ctx
// on, line for line, and it imports no package of hoist's but transport
// and lock.
func TestReadmeLibraryIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)\n## The library\n.*?```go\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no Go snippet under ## The library")
	}
	snippet := string(m[1])
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	imports := regexp.MustCompile(`(?s)\nimport \(\n.*?\n\)\n`).Find(src)
	body := regexp.MustCompile(`(?s)\nfunc ExampleLock_Run\(\) \{\n(\tctx := .*?\n)\t// Output:`).FindSubmatch(src)
	if imports == nil || body == nil {
		t.Fatal("example_test.go has no import block or no ExampleLock_Run starting with ctx")
	}
	var b strings.Builder
	b.WriteString(strings.TrimPrefix(string(imports), "\n") + "\n")
	for _, line := range strings.SplitAfter(string(body[1]), "\n") {
		b.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if want := b.String(); snippet != want {
		t.Errorf("README's library snippet is not ExampleLock_Run; it should read:\n%s\nit reads:\n%s", want, snippet)
	}
	for _, imp := range regexp.MustCompile(`"github.com/hoistdev/hoist/([^"]+)"`).FindAllStringSubmatch(snippet, -1) {
		if imp[1] != "transport" && imp[1] != "lock" {
			t.Errorf("README's library snippet imports %s: a library user needs transport and lock only", imp[1])
		}
	}
}
