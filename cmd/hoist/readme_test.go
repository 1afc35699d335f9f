package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestReadmeRowsNameEveryFlag: each row of the README's command table
// names every flag its command takes (--token is said once for all of
// them, below the table), so a flag the README leaves out is one a reader
// never learns of.
func TestReadmeRowsNameEveryFlag(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // command path -> the row's first cell
	cell := regexp.MustCompile("(?m)^\\| `([^|]*(?:\\\\\\|[^|]*)*)` \\|")
	for _, m := range cell.FindAllStringSubmatch(string(readme), -1) {
		// "pin REF`, `unpin REF": a row may name several commands.
		for _, part := range strings.Split(m[1], "`, `") {
			rows[commandPath(part)] = part
		}
	}
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() || sub.Name() == "help" {
				continue
			}
			walk(sub)
			path := strings.TrimPrefix(sub.CommandPath(), "hoist ")
			row, ok := rows[path]
			if !ok {
				continue // a group (lock) or a command the table names in another row's words
			}
			checked++
			sub.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
				if f.Name == "token" || f.Name == "help" || f.Hidden {
					return
				}
				short := f.Shorthand != "" && regexp.MustCompile(`(^|[ \[])-`+f.Shorthand+`($|[ \]])`).MatchString(row)
				if !strings.Contains(row, "--"+f.Name) && !short {
					t.Errorf("README row %q does not name %s's flag --%s", row, path, f.Name)
				}
			})
		}
	}
	walk(newApp(nil, nil, nil).rootCommand())
	if checked < 15 {
		t.Fatalf("matched %d README rows to commands: %q", checked, rows)
	}
}

// commandPath is the command a README row's cell starts with: its words up
// to the first argument or flag.
func commandPath(cell string) string {
	var words []string
	for _, w := range strings.Fields(cell) {
		if w == "" || strings.ToLower(w) != w || strings.ContainsAny(w, "-[|\\") {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}
