package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// errUsage marks a command line that could not be parsed; the message
// already says what was wrong and where the help is, and the exit code is 2.
var errUsage = errors.New("usage")

// usageError is a command line the command cannot run.
type usageError struct {
	cmd string // "tessera server"
	err error
}

func (e *usageError) Error() string {
	return fmt.Sprintf("%s: %v\nRun '%s --help' for its flags.", e.cmd, e.err, e.cmd)
}

func (e *usageError) Unwrap() []error { return []error{e.err, errUsage} }

// exitError is a failure with an exit code of its own, printed as is
// unless its message is empty.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// command is one tessera command's flags and the text of its help.
type command struct {
	fs *flag.FlagSet
	// name is the command as typed ("server", "admin scrub").
	name string
	// synopsis is the usage line, without "tessera ", e.g. "server DIR...".
	synopsis string
	// about is printed below the usage line: what the command does.
	about string
	// env lists the variables beside TESSERA_<FLAG> the command reads,
	// each "NAME  meaning".
	env []string
	// config, when set, is the --config flag's value: a file whose keys
	// are the flag names (config.go).
	config *string
}

// newCommand returns a command whose FlagSet prints nothing itself:
// errors come back from parse and --help prints help().
func newCommand(name, synopsis, about string) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &command{fs: fs, name: name, synopsis: synopsis, about: about}
}

// withConfig adds --config FILE, read by parse.
func (c *command) withConfig() *command {
	c.config = c.fs.String("config", "", "a TOML (.toml) or YAML (.yaml, .yml) file of flag values keyed by flag name")
	return c
}

// parse reads the flags of args, then TESSERA_<FLAG> variables for those
// not given, then the --config file for those still unset, and returns
// the positional arguments (flags and positionals may interleave, as
// users type `tessera server /data --address :9000`). -h and --help print
// the help to stdout and return flag.ErrHelp.
func (c *command) parse(args []string, stdout io.Writer) ([]string, error) {
	pos, err := parseInterleaved(c.fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.help(stdout)
		return nil, flag.ErrHelp
	}
	if err != nil {
		return nil, &usageError{cmd: "tessera " + c.name, err: err}
	}
	set, err := envOverride(c.fs)
	if err != nil {
		return nil, &usageError{cmd: "tessera " + c.name, err: err}
	}
	if c.config != nil && *c.config != "" {
		if err := applyConfigFile(c.fs, *c.config, set); err != nil {
			return nil, &usageError{cmd: "tessera " + c.name, err: err}
		}
	}
	return pos, nil
}

// noArgs fails when positional arguments were given to a command that
// takes none.
func (c *command) noArgs(pos []string) error {
	if len(pos) > 0 {
		return &usageError{cmd: "tessera " + c.name, err: fmt.Errorf("unexpected argument %q", pos[0])}
	}
	return nil
}

// parseInterleaved parses flags wherever they stand among positional
// arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// envName is the variable that sets flag name: TESSERA_ and the name in
// upper case with dashes as underscores.
func envName(flagName string) string {
	return "TESSERA_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// envOverride gives every flag not set on the command line the value of
// its variable (envName), so containers and systemd units can configure
// tessera without arguments. It returns the flags set either way.
func envOverride(fs *flag.FlagSet) (map[string]bool, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		name := envName(f.Name)
		if v, ok := os.LookupEnv(name); ok {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%s=%q: %w", name, v, e)
			}
			set[f.Name] = true
		}
	})
	return set, err
}
