package versioning

import (
	"testing"
	"time"

	"tessera/meta"
)

func at(sec int64) time.Time { return time.Unix(sec, 0) }

func vkey(key string, sec int64) string { return meta.VersionKey(key, meta.NewVersionID(sec*1e9)) }

func TestOrder(t *testing.T) {
	v3, v2, v1 := vkey("k", 30), vkey("k", 20), vkey("k", 10)
	versions := []Stored{{StoredKey: v3, ModTime: at(30)}, {StoredKey: v2, ModTime: at(20), DeleteMarker: true}, {StoredKey: v1, ModTime: at(10)}}
	tests := []struct {
		name   string
		null   *Stored
		want   []string // version keys, "null" for the null version
		latest string
	}{
		{"versions only", nil, []string{v3, v2, v1}, v3},
		{"null newest", &Stored{StoredKey: "k", ModTime: at(40)}, []string{"null", v3, v2, v1}, "null"},
		{"null between", &Stored{StoredKey: "k", ModTime: at(15)}, []string{v3, v2, "null", v1}, v3},
		{"null oldest", &Stored{StoredKey: "k", ModTime: at(5)}, []string{v3, v2, v1, "null"}, v3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := versions
			if tc.null != nil {
				in = append([]Stored{*tc.null}, versions...)
			}
			got := Order(in)
			if len(got) != len(tc.want) {
				t.Fatalf("%d versions, want %d", len(got), len(tc.want))
			}
			for i, v := range got {
				name := v.StoredKey
				if v.ID == NullVersionID {
					name = "null"
				}
				if name != tc.want[i] || v.Key != "k" || v.IsLatest != (i == 0) {
					t.Fatalf("version %d = %+v, want %s (latest %v)", i, v, tc.want[i], i == 0)
				}
				if _, id, ok := meta.SplitVersion(v.StoredKey); ok && id != v.ID {
					t.Fatalf("version %d has ID %s, stored under %s", i, v.ID, v.StoredKey)
				}
			}
			first := &versions[0]
			l, ok := Latest(tc.null, first)
			if !ok || (l.StoredKey != tc.latest && !(tc.latest == "null" && l.StoredKey == "k")) {
				t.Fatalf("Latest = %+v, %v; want %s", l, ok, tc.latest)
			}
		})
	}
	if got := Order([]Stored{{StoredKey: "only", ModTime: at(1)}}); len(got) != 1 || got[0].ID != NullVersionID || !got[0].IsLatest {
		t.Fatalf("an unversioned object = %+v, want one latest null version", got)
	}
	if _, ok := Latest(nil, nil); ok {
		t.Fatal("Latest of nothing found a version")
	}
	if l, ok := Latest(&Stored{StoredKey: "k"}, nil); !ok || l.StoredKey != "k" {
		t.Fatalf("Latest of a null version alone = %+v, %v", l, ok)
	}
}
