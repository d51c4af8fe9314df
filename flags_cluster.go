package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"tessera/cluster"
)

// sizeFlag parses a byte count with an optional unit: 500, 64KiB, 10GiB,
// 2TB (decimal units are powers of 1000, binary ones of 1024).
type sizeFlag struct{ n *uint64 }

var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"PiB", 1 << 50},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"P", 1 << 50},
	{"B", 1},
}

func (f sizeFlag) String() string {
	if f.n == nil {
		return ""
	}
	return strconv.FormatUint(*f.n, 10)
}

func (f sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*f.n = n
	return nil
}

func parseSize(v string) (uint64, error) {
	s := strings.TrimSpace(v)
	mult := 1.0
	for _, u := range sizeUnits {
		if len(s) > len(u.suffix) && strings.EqualFold(s[len(s)-len(u.suffix):], u.suffix) {
			s, mult = strings.TrimSpace(s[:len(s)-len(u.suffix)]), u.mult
			break
		}
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x < 0 || math.IsNaN(x) || math.IsInf(x, 0) || x*mult >= math.Exp2(64) {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional unit (KiB, MiB, GiB, TiB, KB, MB, GB, TB)", v)
	}
	return uint64(x * mult), nil
}

// timingFlag selects gossip failure-detection timing by name.
type timingFlag struct{ t *cluster.Timing }

func (f timingFlag) String() string { return "" }

func (f timingFlag) Set(v string) error {
	switch v {
	case "lan", "":
		*f.t = cluster.LocalTiming()
	case "fast":
		*f.t = cluster.FastTiming()
	default:
		return fmt.Errorf("gossip timing %q: want lan or fast", v)
	}
	return nil
}
