package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"
)

// repeatable is a flag that may be given several times (--join,
// --storage-class): its config value may be a list, each item set in turn.
type repeatable interface{ repeatable() }

// applyConfigFile sets every flag of fs not in set (given on the command
// line or by its variable) from the file at path, whose keys are the flag
// names. A key that names no flag is an error naming it: a typo must not
// pass for a default.
func applyConfigFile(fs *flag.FlagSet, path string, set map[string]bool) error {
	values, err := readConfig(path)
	if err != nil {
		return err
	}
	var unknown []string
	for k := range values {
		if k == "config" || fs.Lookup(k) == nil {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("config %s: unknown keys %s (a key is the name of a flag of this command)",
			path, strings.Join(unknown, ", "))
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if set[k] {
			continue
		}
		if err := setFromConfig(fs.Lookup(k), values[k]); err != nil {
			return fmt.Errorf("config %s: %s: %w", path, k, err)
		}
	}
	return nil
}

// readConfig decodes a TOML or YAML file, told apart by its extension,
// into its top-level keys.
func readConfig(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	values := map[string]any{}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		_, err = toml.Decode(string(b), &values)
	case ".yaml", ".yml":
		err = yaml.Unmarshal(b, &values)
	default:
		return nil, fmt.Errorf("config %s: want a .toml, .yaml or .yml file", path)
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return values, nil
}

// setFromConfig sets f from a decoded value: a scalar as the flag's text
// would be, a list item by item for flags that repeat.
func setFromConfig(f *flag.Flag, v any) error {
	items, isList := v.([]any)
	if !isList {
		items = []any{v}
	} else if _, ok := f.Value.(repeatable); !ok {
		return fmt.Errorf("a list, but --%s takes one value", f.Name)
	}
	for _, item := range items {
		s, err := scalarText(item)
		if err != nil {
			return err
		}
		if err := f.Value.Set(s); err != nil {
			return fmt.Errorf("invalid value %q: %w", s, err)
		}
	}
	return nil
}

// scalarText renders a decoded scalar as it would be typed on the
// command line.
func scalarText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case nil:
		return "", fmt.Errorf("no value")
	default:
		return "", fmt.Errorf("a %T is not a flag value", v)
	}
}
