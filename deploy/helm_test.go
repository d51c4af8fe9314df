package deploy

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var rewrite = flag.Bool("rewrite", false, "render kubernetes/tessera.yaml from the chart again")

const chartDir = "helm/tessera"

// manifestHeader opens kubernetes/tessera.yaml.
const manifestHeader = `# tessera on Kubernetes without Helm: the chart in deploy/helm/tessera
# rendered with its default values (helm template tessera deploy/helm/tessera).
# Do not edit: change the chart and run
#   cd deploy && go test -run TestManifestsInSync -rewrite
# Before applying, create the Secret the pods read their keys from:
#   kubectl create secret generic tessera-auth \
#     --from-literal=TESSERA_ACCESS_KEY=... --from-literal=TESSERA_SECRET_KEY=... \
#     --from-literal=TESSERA_CLUSTER_SECRET="$(head -c 32 /dev/urandom | base64)"
# and load the image tessera:VERSION (docker build, see the Dockerfile) where
# the nodes find it. The objects carry no namespace: kubectl apply -n NS.
`

// helmTemplate renders the chart as release "tessera" with extra helm
// arguments.
func helmTemplate(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	helm := need(t, "helm", "go install helm.sh/helm/v4/cmd/helm@v4.3.2")
	return run(t, ".", helm, append([]string{"template", "tessera", chartDir}, args...)...)
}

// TestManifestsInSync: kubernetes/tessera.yaml is the chart's default
// rendering.
func TestManifestsInSync(t *testing.T) {
	out, err := helmTemplate(t)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	want := append([]byte(manifestHeader), out...)
	if *rewrite {
		if err := os.WriteFile("kubernetes/tessera.yaml", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := readFile(t, "kubernetes/tessera.yaml"); !bytes.Equal(got, want) {
		t.Fatalf("kubernetes/tessera.yaml is not the chart's default rendering; run: cd deploy && go test -run TestManifestsInSync -rewrite")
	}
}

func TestChartLint(t *testing.T) {
	helm := need(t, "helm", "go install helm.sh/helm/v4/cmd/helm@v4.3.2")
	for _, set := range [][]string{nil, {"--set", "serviceMonitor.enabled=true,prometheusRule.enabled=true,auth.existingSecret=s"}} {
		if out, err := run(t, ".", helm, append([]string{"lint", "--strict", chartDir}, set...)...); err != nil {
			t.Errorf("helm lint --strict %v: %v\n%s", set, err, out)
		}
	}
}

// TestChartValues renders the chart with other values and checks the
// objects follow them.
func TestChartValues(t *testing.T) {
	cases := []struct {
		name string
		set  []string
		want func(want) want
		// args the peer or gateway container must carry
		peerArgs, gatewayArgs []string
	}{
		{
			name: "keys given: the chart makes the Secret",
			set:  []string{"auth.accessKey=ak", "auth.secretKey=sk", "auth.clusterSecret=cs"},
			want: func(w want) want { w.secretCreated = true; return w },
		},
		{
			name: "an existing Secret",
			set:  []string{"auth.existingSecret=store-keys"},
			want: func(w want) want { w.secret = "store-keys"; return w },
		},
		{
			name: "monitoring on",
			set:  []string{"serviceMonitor.enabled=true", "prometheusRule.enabled=true"},
			want: func(w want) want { w.serviceMonitor, w.prometheusRule = true, true; return w },
		},
		{
			name: "a small cluster with zones, classes, another domain and image",
			set: []string{"peer.replicas=3", "erasureCode=2+1", "storageClasses.ARCHIVE=1+1", "peer.zone=rack1",
				"peer.capacity=500GiB", "peer.ringWidth=3", "clusterDomain=k8s.example", "image.tag=1.2.3",
				"gateway.webPublic=true", "fullnameOverride=s3"},
			want: func(w want) want {
				w.peers, w.code, w.domain, w.image, w.fullname, w.secret = 3, "2+1", "k8s.example", "tessera:1.2.3", "s3", "s3-auth"
				return w
			},
			peerArgs:    []string{"--zone=rack1", "--capacity=500GiB", "--ring-width=3"},
			gatewayArgs: []string{"--storage-class=ARCHIVE=1+1", "--web-public"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			out, err := helmTemplate(t, args...)
			if err != nil {
				t.Fatalf("helm template: %v\n%s", err, out)
			}
			o, err := decodeObjects(out)
			if err != nil {
				t.Fatal(err)
			}
			checkCluster(t, o, tc.want(defaultWant(t)))
			for _, a := range tc.peerArgs {
				if !slices.Contains(o.statefulSets[0].Spec.Template.Spec.Containers[0].Args, a) {
					t.Errorf("peer args lack %s", a)
				}
			}
			for _, a := range tc.gatewayArgs {
				if !slices.Contains(o.deployments[0].Spec.Template.Spec.Containers[0].Args, a) {
					t.Errorf("gateway args lack %s", a)
				}
			}
		})
	}
}

// TestChartRefuses: values that cannot make a working cluster fail the
// rendering with a message that says why.
func TestChartRefuses(t *testing.T) {
	for _, tc := range []struct {
		set  string
		says string
	}{
		{"auth.accessKey=ak", "must be given together"},
		{"auth.existingSecret=s,auth.accessKey=a,auth.secretKey=b,auth.clusterSecret=c", "not both"},
		{"erasureCode=8+4", "needs 12 peers, peer.replicas is 6"},
		{"erasureCode=4-2", "want K+M"},
	} {
		out, err := helmTemplate(t, "--set", tc.set)
		if err == nil || !strings.Contains(string(out), tc.says) {
			t.Errorf("--set %s: err %v, output %q; want a failure saying %q", tc.set, err, out, tc.says)
		}
	}
}

// TestChartMeta: the chart deploys the version the binary reports, and its
// copy of the alert rules is deploy/prometheus's.
func TestChartMeta(t *testing.T) {
	var chart struct {
		APIVersion string `json:"apiVersion"`
		Name       string `json:"name"`
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(readFile(t, chartDir+"/Chart.yaml"), &chart); err != nil {
		t.Fatal(err)
	}
	if chart.APIVersion != "v2" || chart.Name != "tessera" || !regexp.MustCompile(`^\d+\.\d+\.\d+`).MatchString(chart.Version) {
		t.Errorf("Chart.yaml: %+v", chart)
	}
	if v := version(t); chart.AppVersion != v {
		t.Errorf("Chart.yaml appVersion %q, version.go %q", chart.AppVersion, v)
	}
	if !bytes.Equal(readFile(t, chartDir+"/files/tessera-rules.yaml"), readFile(t, "prometheus/tessera-rules.yaml")) {
		t.Errorf("%s/files/tessera-rules.yaml differs from prometheus/tessera-rules.yaml; copy it", chartDir)
	}
}
