package server

import (
	"errors"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// fsShares counts, for each of dirs, how many of dirs live on its
// filesystem (itself included), so peers of one process that share a
// disk can each report a share of it rather than all of it: six peers
// in DIR/peer1..6 otherwise count one disk six times. A directory not
// made yet counts as its nearest existing parent's; one that cannot be
// examined counts as alone.
func fsShares(dirs []string) []int {
	ids := make([]uint64, len(dirs))
	ok := make([]bool, len(dirs))
	count := map[uint64]int{}
	for i, d := range dirs {
		id, err := filesystemID(d)
		if err != nil {
			continue
		}
		ids[i], ok[i] = id, true
		count[id]++
	}
	out := make([]int, len(dirs))
	for i := range dirs {
		out[i] = 1
		if ok[i] {
			out[i] = count[ids[i]]
		}
	}
	return out
}

// filesystemID is the device of the filesystem dir is (or will be) on.
func filesystemID(dir string) (uint64, error) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		var st unix.Stat_t
		err := unix.Stat(d, &st)
		if err == nil {
			return uint64(st.Dev), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || d == filepath.Dir(d) {
			return 0, err
		}
	}
}
