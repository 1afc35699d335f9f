package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/cmd/hoist/output"
)

// decodeLines decodes hoist's --json output, one object per line, each
// into a T (a type of package cmd/hoist/output), strictly: a field T lacks
// fails the test and is named, as does a field of another JSON type.
func decodeLines[T any](t testing.TB, what, stdout string) []T {
	t.Helper()
	var objs []T
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var v T
		d := json.NewDecoder(strings.NewReader(line))
		d.DisallowUnknownFields()
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%s: --json output %q does not decode into %T: %v", what, line, v, err)
		}
		objs = append(objs, v)
	}
	return objs
}

// decodeOne is decodeLines for the output of one host: exactly one line.
func decodeOne[T any](t testing.TB, what, stdout string) T {
	t.Helper()
	objs := decodeLines[T](t, what, stdout)
	if len(objs) != 1 {
		t.Fatalf("%s: %d lines of --json output, want one: %q", what, len(objs), stdout)
	}
	return objs[0]
}

// js is v as JSON, to show in a message.
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// heldOf is the fields of a held lock, zero when it is free, to compare
// without a nil check.
func heldOf(l output.Lock) output.Held {
	if l.Held == nil {
		return output.Held{}
	}
	return *l.Held
}

// head is the Result every --json object has.
func head(v any) *output.Result { return v.(output.Object).Head() }
