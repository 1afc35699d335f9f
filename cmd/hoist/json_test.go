package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hoistdev/hoist/cmd/hoist/output"
)

// outputTypes are the --json types by name, for the transcripts' json
// command.
var outputTypes = map[string]func() output.Object{
	"Result":      func() output.Object { return &output.Result{} },
	"LockStatus":  func() output.Object { return &output.LockStatus{} },
	"LockAcquire": func() output.Object { return &output.LockAcquire{} },
	"LockRelease": func() output.Object { return &output.LockRelease{} },
	"LockBreak":   func() output.Object { return &output.LockBreak{} },
	"LockRefresh": func() output.Object { return &output.LockRefresh{} },
	"Run":         func() output.Object { return &output.Run{} },
	"Runs":        func() output.Object { return &output.Runs{} },
	"Logs":        func() output.Object { return &output.Logs{} },
	"Push":        func() output.Object { return &output.Push{} },
	"List":        func() output.Object { return &output.List{} },
	"History":     func() output.Object { return &output.History{} },
	"Activate":    func() output.Object { return &output.Activate{} },
	"Pin":         func() output.Object { return &output.Pin{} },
	"GC":          func() output.Object { return &output.GC{} },
	"Doctor":      func() output.Object { return &output.Doctor{} },
	"Publish":     func() output.Object { return &output.Publish{} },
	"Mux":         func() output.Object { return &output.Mux{} },
	"Unreached":   func() output.Object { return &output.Unreached{} },
}

// decodeLines decodes each line of out into a new output.TYPE, refusing a
// field the type lacks, and checks that the type prints the line back as
// it was (a failure, or its Result alone): hoist's output and the type
// agree field for field.
func decodeLines(out, typ string) error {
	mk, ok := outputTypes[typ]
	if !ok {
		return fmt.Errorf("json: no type output.%s", typ)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if out == "" {
		return fmt.Errorf("json: no output to decode into output.%s", typ)
	}
	for _, line := range lines {
		obj := mk()
		d := json.NewDecoder(strings.NewReader(line))
		d.DisallowUnknownFields()
		if err := d.Decode(obj); err != nil {
			return fmt.Errorf("json: %s does not decode into output.%s: %v", line, typ, err)
		}
		again := jsonLine(obj)
		if h := obj.Head(); !h.OK && again != line+"\n" {
			again = jsonLine(h) // a failure that got nowhere: the Result alone
		}
		if again != line+"\n" {
			return fmt.Errorf("json: output.%s does not print %s back as it was:\n%s", typ, line, again)
		}
	}
	return nil
}
