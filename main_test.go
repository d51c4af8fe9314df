package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"tessera/meta"
)

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"version"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "tessera ") || !strings.Contains(got, version) {
		t.Fatalf("version printed %q", got)
	}
}

func TestUnknownCommand(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"frobnicate"}, &out, &out); err == nil {
		t.Fatal("unknown command accepted")
	}
}

func TestEnvOverride(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		env     map[string]string
		address string
		code    meta.Code
		dirs    []string
		wantErr bool
	}{
		{"defaults", []string{"/d"}, nil, ":9000", meta.Code{K: 4, M: 2}, []string{"/d"}, false},
		{"env", []string{"/d"}, map[string]string{"TESSERA_ADDRESS": ":1234", "TESSERA_EC": "2+1"}, ":1234", meta.Code{K: 2, M: 1}, []string{"/d"}, false},
		{"flag beats env", []string{"--address", ":9", "/d"}, map[string]string{"TESSERA_ADDRESS": ":1234"}, ":9", meta.Code{K: 4, M: 2}, []string{"/d"}, false},
		{"interleaved", []string{"/a", "--ec", "6+3", "/b"}, nil, ":9000", meta.Code{K: 6, M: 3}, []string{"/a", "/b"}, false},
		{"bad env", []string{"/d"}, map[string]string{"TESSERA_EC": "4-2"}, "", meta.Code{}, nil, true},
		{"bad code", []string{"--ec", "0+2", "/d"}, nil, "", meta.Code{}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c := newCommand("t", "t", "")
			address := ":9000"
			code := meta.Code{K: 4, M: 2}
			c.fs.StringVar(&address, "address", address, "")
			c.fs.Var(codeFlag{&code}, "ec", "")
			dirs, err := c.parse(tc.args, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if address != tc.address || code != tc.code || strings.Join(dirs, ",") != strings.Join(tc.dirs, ",") {
				t.Fatalf("got address %q code %v dirs %v", address, code, dirs)
			}
		})
	}
}

func TestStorageClassFlag(t *testing.T) {
	f := classFlag{}
	if err := f.Set("cold=2+1,wide=10+4"); err != nil {
		t.Fatal(err)
	}
	if f["COLD"] != (meta.Code{K: 2, M: 1}) || f["WIDE"] != (meta.Code{K: 10, M: 4}) {
		t.Fatalf("parsed %v", f)
	}
	for _, bad := range []string{"cold", "=2+1", "x=2", "x=a+b"} {
		if err := (classFlag{}).Set(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestClockOffsetFromEnv(t *testing.T) {
	cases := []struct {
		val     string
		want    time.Duration
		wantErr bool
	}{
		{"", 0, false},
		{"-30s", -30 * time.Second, false},
		{"1m30s", 90 * time.Second, false},
		{"30", 0, true}, // a duration needs its unit
		{"soon", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.val, func(t *testing.T) {
			t.Setenv(clockOffsetEnv, tc.val)
			got, err := clockOffsetFromEnv()
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("%s=%q: %v, %v; want %v, error %v", clockOffsetEnv, tc.val, got, err, tc.want, tc.wantErr)
			}
		})
	}
}
