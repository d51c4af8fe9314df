package server

import (
	"strings"
	"testing"

	"tessera/meta"
)

func TestCodeTooWide(t *testing.T) {
	cases := []struct {
		code   meta.Code
		have   int
		oneDir bool
		want   string
	}{
		{meta.Code{K: 4, M: 2}, 4, true, "server: code 4+2 needs 6 peers, have 4: use --ec 2+2 (2 of 4 peers may fail) or --ec 3+1 (1 of 4 peers may fail), or give --peers 6"},
		{meta.Code{K: 4, M: 2}, 3, false, "use --ec 1+2 (2 of 3 peers may fail) or --ec 2+1 (1 of 3 peers may fail), or give 6 DIRs"},
		{meta.Code{K: 4, M: 2}, 2, true, "use --ec 1+1 (1 of 2 peers may fail), or"},
		{meta.Code{K: 10, M: 4}, 1, true, "use --ec 1+0 (0 of 1 peers may fail)"},
		{meta.Code{K: 8, M: 1}, 5, true, "use --ec 4+1 (1 of 5 peers may fail), or give --peers 9"},
	}
	for _, tc := range cases {
		err := codeTooWide(tc.code, tc.have, tc.oneDir)
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s on %d peers: %q, want it to contain %q", tc.code, tc.have, err, tc.want)
		}
		for _, c := range fittingCodes(tc.code, tc.have) {
			if !c.Valid() || c.N() != tc.have {
				t.Errorf("%s on %d peers: suggested %s, which does not fit", tc.code, tc.have, c)
			}
		}
	}
}
