package main

import (
	"fmt"
	"sort"
	"strings"

	"tessera/meta"
)

// listFlag collects comma-separated or repeated values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (*listFlag) repeatable() {}

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

func (classFlag) repeatable() {}

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
