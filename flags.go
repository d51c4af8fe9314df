package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"tessera/meta"
)

// envOverride gives every flag not set on the command line the value of
// TESSERA_<FLAG> (upper case, dashes as underscores), so containers and
// systemd units can configure tessera without arguments.
func envOverride(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		name := "TESSERA_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%s=%q: %w", name, v, e)
			}
		}
	})
	return err
}

// listFlag collects comma-separated or repeated values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// codeFlag parses K+M.
type codeFlag struct{ c *meta.Code }

func (f codeFlag) String() string {
	if f.c == nil {
		return ""
	}
	return f.c.String()
}

func (f codeFlag) Set(v string) error {
	c, err := meta.ParseCode(v)
	if err != nil {
		return err
	}
	*f.c = c
	return nil
}

// classFlag parses repeated NAME=K+M storage class definitions.
type classFlag map[string]meta.Code

func (f classFlag) String() string {
	names := make([]string, 0, len(f))
	for n, c := range f {
		names = append(names, n+"="+c.String())
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func (f classFlag) Set(v string) error {
	for _, def := range strings.Split(v, ",") {
		name, code, ok := strings.Cut(strings.TrimSpace(def), "=")
		if !ok || name == "" {
			return fmt.Errorf("storage class %q: want NAME=K+M", def)
		}
		c, err := meta.ParseCode(code)
		if err != nil {
			return fmt.Errorf("storage class %s: %w", name, err)
		}
		f[strings.ToUpper(name)] = c
	}
	return nil
}
