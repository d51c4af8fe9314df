package main

import (
	"flag"
	"strconv"

	"tessera/scrub"
)

// registerScrub adds the scrubber's flags, shared by `tessera peer` and
// `tessera server`.
func registerScrub(fs *flag.FlagSet, c *scrub.Config) {
	fs.DurationVar(&c.Interval, "scrub-interval", scrub.DefaultInterval,
		"a full scrub pass (read and verify every shard and record) starts this often; passes are paced to fit it")
	c.BytesPerSec = scrub.DefaultBytesPerSec
	fs.Var(rateFlag{&c.BytesPerSec}, "scrub-rate", "most shard bytes per second a peer's scrub reads, e.g. 32MiB")
	fs.Float64Var(&c.ObjectsPerSec, "scrub-objects-rate", scrub.DefaultObjectsPerSec, "most objects per second a peer's scrub checks")
}

// rateFlag is a byte rate given as a size (parseSize units) per second.
type rateFlag struct{ r *float64 }

func (f rateFlag) String() string {
	if f.r == nil {
		return ""
	}
	if mib := *f.r / (1 << 20); mib >= 1 && mib == float64(int64(mib)) {
		return strconv.FormatInt(int64(mib), 10) + "MiB"
	}
	return strconv.FormatFloat(*f.r, 'f', -1, 64)
}

func (f rateFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*f.r = float64(n)
	return nil
}
