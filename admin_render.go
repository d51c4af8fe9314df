package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Helpers the admin tables share.

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// row writes cells as one tab-separated table row.
func row(w io.Writer, cells ...string) { fmt.Fprintln(w, strings.Join(cells, "\t")) }

// humanBytes is n in binary units to three significant digits.
func humanBytes[T int64 | uint64](n T) string {
	v := float64(n)
	if v < 1024 {
		return strconv.FormatInt(int64(n), 10) + " B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := -1
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, units[i])
	case v >= 10:
		return fmt.Sprintf("%.1f %s", v, units[i])
	}
	return fmt.Sprintf("%.2f %s", v, units[i])
}

// age is how long before now t was, in the largest whole unit: 42s,
// 5m, 3h, 2d ("-" for a zero time).
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// orDash is s, or "-" when empty, so table columns never collapse.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// plural is "1 peer", "2 peers", "3 passes".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	if strings.HasSuffix(one, "s") {
		return strconv.Itoa(n) + " " + one + "es"
	}
	return strconv.Itoa(n) + " " + one + "s"
}
