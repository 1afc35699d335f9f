package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// usage prints a command's usage the house way: lower-case headings, the
// examples first, the command's own flags before the global ones.
func usage(c *cobra.Command) error {
	var b strings.Builder
	lead := "usage: "
	if c.Runnable() && !c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "%s%s\n", lead, c.UseLine())
		lead = "       "
	}
	if c.HasAvailableSubCommands() {
		if c.HasParent() {
			fmt.Fprintf(&b, "%s%s COMMAND [flags]\n", lead, c.CommandPath())
		} else {
			fmt.Fprintf(&b, "%s%s [global flags] COMMAND [flags] [args]\n", lead, c.CommandPath())
		}
	}
	if c.HasExample() {
		fmt.Fprintf(&b, "\nexamples:\n%s\n", strings.TrimRight(c.Example, "\n"))
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\ncommands:\n")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				fmt.Fprintf(&b, "  %-*s %s\n", c.NamePadding(), sub.Name(), sub.Short)
			}
		}
	}
	local, global := c.LocalNonPersistentFlags(), c.InheritedFlags()
	if !c.HasParent() {
		global = c.PersistentFlags()
	}
	if local.HasAvailableFlags() {
		fmt.Fprintf(&b, "\nflags:\n%s", local.FlagUsages())
	}
	if global.HasAvailableFlags() {
		fmt.Fprintf(&b, "\nglobal flags (before or after the command):\n%s", global.FlagUsages())
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\nSee %s COMMAND --help for more about a command.\n", c.CommandPath())
	}
	_, err := fmt.Fprint(c.OutOrStderr(), b.String())
	return err
}

// helpCommand is "hoist help [COMMAND...]": the help of a command, which
// never runs it. An unknown topic is a usage error.
func helpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND...]",
		Short: "show the help of hoist or of a command",
		Example: `  hoist help push
  hoist help lock acquire`,
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return usageErr("no help for %q: there is no such command", strings.Join(args, " "))
			}
			cmd.InitDefaultHelpFlag()
			return cmd.Help()
		},
	}
}
