package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// fakeCluster records the admin calls that reach it.
type fakeCluster struct {
	fakeAdmin
	mode    string
	drained []string
	heals   map[string]HealStatus
}

func (a *fakeCluster) ClusterStatus(context.Context) ClusterStatus {
	return ClusterStatus{Gateway: "gw", Nodes: []AdminNode{{ID: "p1", Role: "peer", State: "alive"}}, Ring: RingSummary{Epoch: 3, Mode: a.mode}}
}

func (a *fakeCluster) Layout(context.Context) LayoutReply {
	return LayoutReply{Epoch: 3, Mode: a.mode, Peers: []LayoutPeer{{ID: "p1", Vnodes: 64}}}
}

func (a *fakeCluster) SetLayoutMode(ctx context.Context, mode string) (LayoutReply, error) {
	a.mode = mode
	return a.Layout(ctx), nil
}

func (a *fakeCluster) ApplyLayout(context.Context) (LayoutReply, error) {
	return LayoutReply{}, fmt.Errorf("%w: the layout mode is automatic", ErrAdminRequest)
}

func (a *fakeCluster) Decommission(_ context.Context, peer string) (DecommissionReply, error) {
	switch peer {
	case "p1":
		a.drained = append(a.drained, peer)
		return DecommissionReply{Peer: "p1", Address: "127.0.0.1:9100"}, nil
	case "p2":
		return DecommissionReply{}, errors.New("drain p2: connection refused")
	}
	return DecommissionReply{}, fmt.Errorf("%w: no peer %q", ErrAdminRequest, peer)
}

func (a *fakeCluster) StartHeal(_ context.Context, req HealRequest) (HealStatus, error) {
	st := HealStatus{ID: "1", HealRequest: req}
	a.heals[st.ID] = st
	return st, nil
}

func (a *fakeCluster) HealStatus(id string) (HealStatus, error) {
	st, ok := a.heals[id]
	if !ok {
		return st, fmt.Errorf("%w: no heal job %q", ErrAdminRequest, id)
	}
	return st, nil
}

func (a *fakeCluster) StorageClasses() []StorageClass {
	return []StorageClass{{Name: "STANDARD", Code: "4+2"}, {Name: "COLD", Code: "2+1"}}
}

// Every new admin route reaches its ClusterAdmin or HealAdmin method with
// the parameters it was given, and refusals carry their own text.
func TestAdminClusterRoutes(t *testing.T) {
	admin := &fakeCluster{fakeAdmin: fakeAdmin{policy: "eta"}, mode: LayoutAuto, heals: map[string]HealStatus{}}
	h := newAdminGateway(t, allowAll{}, admin)
	cases := []struct {
		name, method, target string
		status               int
		want                 string // in the body
	}{
		{"status", http.MethodGet, "status", 200, `"epoch":3`},
		{"layout", http.MethodGet, "layout", 200, `"vnodes":64`},
		{"mode manual", http.MethodPut, "layout?mode=manual", 200, `"mode":"manual"`},
		{"mode bogus", http.MethodPut, "layout?mode=sometimes", 400, "InvalidArgument"},
		{"apply refused", http.MethodPost, "layout/apply", 400, "<Message>the layout mode is automatic</Message>"},
		{"decommission", http.MethodPost, "decommission?peer=p1", 200, `"address":"127.0.0.1:9100"`},
		{"decommission unnamed", http.MethodPost, "decommission", 400, "InvalidArgument"},
		{"decommission unknown", http.MethodPost, "decommission?peer=p9", 400, `<Message>no peer "p9"</Message>`},
		{"decommission fails", http.MethodPost, "decommission?peer=p2", 500, "drain p2: connection refused"},
		{"heal", http.MethodPost, "heal?bucket=b&prefix=x/&quick=true", 200, `"prefix":"x/","quick":true`},
		{"heal no bucket", http.MethodPost, "heal?prefix=x/", 400, "InvalidArgument"},
		{"heal bad quick", http.MethodPost, "heal?bucket=b&quick=maybe", 400, "InvalidArgument"},
		{"heal status", http.MethodGet, "heal?id=1", 200, `"bucket":"b"`},
		{"heal unknown", http.MethodGet, "heal?id=7", 400, "no heal job"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, req{method: tc.method, target: AdminPrefix + tc.target})
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Fatalf("%s %s: %d %s; want %d with %q", tc.method, tc.target, rec.Code, rec.Body, tc.status, tc.want)
			}
		})
	}
	if admin.mode != LayoutManual || len(admin.drained) != 1 {
		t.Fatalf("mode %q, drained %v", admin.mode, admin.drained)
	}
	// An admin without these controls answers NotImplemented.
	h = newAdminGateway(t, allowAll{}, &fakeAdmin{policy: "eta"})
	for _, target := range []string{"status", "layout", "heal?id=1"} {
		expect(t, do(h, req{method: http.MethodGet, target: AdminPrefix + target}), http.StatusNotImplemented, "NotImplemented")
	}
}

// The bucket report counts a full listing by storage class, with the
// classes' codes, and carries the CORS configuration.
func TestAdminBucketReport(t *testing.T) {
	be := &corsBackend{fakeBackend: newFakeBackend(), cfgs: map[string][]byte{}}
	admin := &fakeCluster{fakeAdmin: fakeAdmin{policy: "eta"}, heals: map[string]HealStatus{}}
	h, err := New(Config{Backend: be, Auth: allowAll{}, Logger: zerolog.Nop(), Admin: admin})
	if err != nil {
		t.Fatal(err)
	}
	objects := map[string]string{}
	for i := range 1500 { // more than one listing page
		objects[fmt.Sprintf("k%04d", i)] = "abc"
	}
	setup(t, h, "bkt", objects)
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/cold", body: "12345", header: map[string]string{"X-Amz-Storage-Class": "COLD"}})
	cors := `<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>`
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt?cors", body: cors})

	rec := do(h, req{method: http.MethodGet, target: AdminPrefix + "bucket?name=bkt"})
	var got BucketReport
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &got) != nil {
		t.Fatalf("GET bucket: %d %s", rec.Code, rec.Body)
	}
	want := []ClassUsage{{Class: "COLD", Code: "2+1", Objects: 1, Bytes: 5}, {Class: "STANDARD", Code: "4+2", Objects: 1500, Bytes: 4500}}
	if got.Objects != 1501 || got.Bytes != 4505 || fmt.Sprint(got.Classes) != fmt.Sprint(want) {
		t.Fatalf("report %+v", got)
	}
	if got.CORSRules != 1 || !strings.Contains(got.CORS, "AllowedOrigin") || got.Versioning != "off" || got.ObjectLock {
		t.Fatalf("configuration in the report: %+v", got)
	}
	mustDo(t, h, req{method: http.MethodPut, target: "/locked", header: map[string]string{"X-Amz-Bucket-Object-Lock-Enabled": "true"}})
	rec = do(h, req{method: http.MethodGet, target: AdminPrefix + "bucket?name=locked"})
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Versioning != "Enabled" || !got.ObjectLock {
		t.Fatalf("a bucket with object lock: %+v, %v", got, err)
	}
	expect(t, do(h, req{method: http.MethodGet, target: AdminPrefix + "bucket?name=nope"}), http.StatusNotFound, "NoSuchBucket")
	expect(t, do(h, req{method: http.MethodGet, target: AdminPrefix + "bucket"}), http.StatusBadRequest, "InvalidArgument")
}
