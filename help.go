package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// help prints the command's usage, what it does, and every flag with the
// variable that also sets it.
func (c *command) help(w io.Writer) {
	fmt.Fprintf(w, "Usage: tessera %s\n", c.synopsis)
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.about, "\n"))
	}
	if hasFlags(c.fs) {
		fmt.Fprint(w, "\nFlags, each also set by the variable beside it")
		if c.config != nil {
			fmt.Fprint(w, " or by its name as a key\nof the --config file (a flag beats its variable, which beats the file)")
		}
		fmt.Fprint(w, ":\n")
		c.fs.VisitAll(func(f *flag.Flag) { printFlag(w, f) })
	}
	if len(c.env) > 0 {
		fmt.Fprint(w, "\nEnvironment:\n")
		for _, e := range c.env {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// printFlag writes one flag as `  --name VALUE  $TESSERA_NAME` over its
// usage and default.
func printFlag(w io.Writer, f *flag.Flag) {
	arg, usage := flag.UnquoteUsage(f)
	if arg == "value" {
		arg = valueName(f.Value)
	}
	head := "  --" + f.Name
	if arg != "" {
		head += " " + arg
	}
	fmt.Fprintf(w, "%-36s %s\n", head, envName(f.Name))
	if def := shownDefault(f); def != "" {
		usage += " (default " + def + ")"
	}
	fmt.Fprintf(w, "        %s\n", usage)
}

// shownDefault is the default worth printing: none for empty, zero and
// false values, which say nothing the usage does not.
func shownDefault(f *flag.Flag) string {
	switch f.DefValue {
	case "", "0", "0s", "false", "[]":
		return ""
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if _, isString := g.Get().(string); isString {
			return strconv.Quote(f.DefValue)
		}
	}
	return f.DefValue
}

// valueName names what a flag of a type of tessera's own takes.
func valueName(v flag.Value) string {
	switch v.(type) {
	case codeFlag:
		return "K+M"
	case classFlag:
		return "NAME=K+M"
	case sizeFlag:
		return "SIZE"
	case rateFlag:
		return "SIZE/S"
	case timingFlag:
		return "lan|fast"
	case *listFlag:
		return "LIST"
	default:
		return "value"
	}
}
