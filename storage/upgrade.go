package storage

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// LayoutUpgrade is a store moving its records from the record-file layout
// into its index (layout.go) while Open runs: the store serves nothing
// until it is done, so its progress is published here for a status page
// in the same process to show.
type LayoutUpgrade struct {
	Dir string
	// Moved is how many records this run has moved so far; Total how
	// many record dirs it found when it started.
	Moved, Total int
	Started      time.Time
}

// upgrades are the layout upgrades running in this process, by dir.
var upgrades = struct {
	sync.Mutex
	m map[string]*LayoutUpgrade
}{m: map[string]*LayoutUpgrade{}}

// LayoutUpgrades returns the layout upgrades running in this process,
// sorted by dir.
func LayoutUpgrades() []LayoutUpgrade {
	upgrades.Lock()
	defer upgrades.Unlock()
	out := make([]LayoutUpgrade, 0, len(upgrades.m))
	for _, u := range upgrades.m {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b LayoutUpgrade) int { return strings.Compare(a.Dir, b.Dir) })
	return out
}

// startUpgrade publishes an upgrade of dir that will move up to total
// records; the returned functions report progress and its end.
func startUpgrade(dir string, total int) (moved func(int), done func()) {
	upgrades.Lock()
	upgrades.m[dir] = &LayoutUpgrade{Dir: dir, Total: total, Started: time.Now()}
	upgrades.Unlock()
	moved = func(n int) {
		upgrades.Lock()
		if u := upgrades.m[dir]; u != nil {
			u.Moved = n
		}
		upgrades.Unlock()
	}
	done = func() {
		upgrades.Lock()
		delete(upgrades.m, dir)
		upgrades.Unlock()
	}
	return moved, done
}

// countRecordDirs counts the object dirs of the record-file layout under
// bucketsDir: one directory read per fan-out dir, no record read, so the
// count costs little beside the upgrade it sizes.
func countRecordDirs(bucketsDir string) int {
	buckets, err := os.ReadDir(bucketsDir)
	if err != nil {
		return 0
	}
	n := 0
	for _, b := range buckets {
		root := filepath.Join(bucketsDir, b.Name(), "obj")
		fans, err := os.ReadDir(root)
		if !b.IsDir() || err != nil {
			continue
		}
		for _, fan := range fans {
			objs, err := os.ReadDir(filepath.Join(root, fan.Name()))
			if err == nil {
				n += len(objs)
			}
		}
	}
	return n
}
