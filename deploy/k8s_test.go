package deploy

import (
	"bytes"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// objects are the Kubernetes objects of one rendering, each decoded
// strictly into its API type.
type objects struct {
	statefulSets    []*appsv1.StatefulSet
	deployments     []*appsv1.Deployment
	services        []*corev1.Service
	secrets         []*corev1.Secret
	pdbs            []*policyv1.PodDisruptionBudget
	serviceMonitors []*monitoringv1.ServiceMonitor
	rules           []*monitoringv1.PrometheusRule
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decodeObjects splits a multi-document YAML stream and decodes every
// object into the Go type of its apiVersion and kind. Unknown fields,
// duplicate keys, wrong value types and kinds this chart does not make are
// errors.
func decodeObjects(stream []byte) (*objects, error) {
	o := &objects{}
	for i, doc := range docSep.Split(string(stream), -1) {
		if onlyComments(doc) {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		var err error
		switch tm.APIVersion + " " + tm.Kind {
		case "apps/v1 StatefulSet":
			o.statefulSets, err = appendStrict(o.statefulSets, doc)
		case "apps/v1 Deployment":
			o.deployments, err = appendStrict(o.deployments, doc)
		case "v1 Service":
			o.services, err = appendStrict(o.services, doc)
		case "v1 Secret":
			o.secrets, err = appendStrict(o.secrets, doc)
		case "policy/v1 PodDisruptionBudget":
			o.pdbs, err = appendStrict(o.pdbs, doc)
		case "monitoring.coreos.com/v1 ServiceMonitor":
			o.serviceMonitors, err = appendStrict(o.serviceMonitors, doc)
		case "monitoring.coreos.com/v1 PrometheusRule":
			o.rules, err = appendStrict(o.rules, doc)
		default:
			return nil, fmt.Errorf("document %d: unexpected object %s %s", i, tm.APIVersion, tm.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i, tm.Kind, err)
		}
	}
	return o, nil
}

func appendStrict[T any](list []*T, doc string) ([]*T, error) {
	v := new(T)
	if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
		return nil, err
	}
	return append(list, v), nil
}

func onlyComments(doc string) bool {
	for _, line := range strings.Split(doc, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// want is what a rendering must hold.
type want struct {
	fullname       string // the release's base name: <fullname>-peer, <fullname>-gateway
	secret         string // the Secret the pods read their keys from
	secretCreated  bool   // the chart renders that Secret
	peers          int32
	code           string // the gateways' --ec
	domain         string
	serviceMonitor bool
	prometheusRule bool
	image          string
}

// checkCluster checks the objects of one rendering against w and against
// the flags the tessera binary accepts.
func checkCluster(t *testing.T, o *objects, w want) {
	t.Helper()
	if len(o.statefulSets) != 1 || len(o.deployments) != 1 || len(o.services) != 2 {
		t.Fatalf("want 1 StatefulSet, 1 Deployment, 2 Services; got %d, %d, %d",
			len(o.statefulSets), len(o.deployments), len(o.services))
	}
	sts, dep := o.statefulSets[0], o.deployments[0]
	peerSvc, gwSvc := service(t, o, w.fullname+"-peer"), service(t, o, w.fullname+"-gateway")
	checkPeers(t, sts, peerSvc, w)
	checkGateways(t, dep, gwSvc, peerSvc, w)
	checkSelections(t, o)
	checkSecret(t, o, w)
	checkMonitoring(t, o, w)
}

func checkPeers(t *testing.T, sts *appsv1.StatefulSet, svc *corev1.Service, w want) {
	t.Helper()
	if sts.Name != w.fullname+"-peer" || sts.Spec.ServiceName != svc.Name {
		t.Errorf("StatefulSet %s serves through %q, want the headless Service %s", sts.Name, sts.Spec.ServiceName, svc.Name)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("peer Service %s: clusterIP %q publishNotReadyAddresses %v; want headless and publishing not-ready peers (they join gossip through it before they are ready)",
			svc.Name, svc.Spec.ClusterIP, svc.Spec.PublishNotReadyAddresses)
	}
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != w.peers {
		t.Errorf("StatefulSet replicas %v, want %d", sts.Spec.Replicas, w.peers)
	}
	pod := sts.Spec.Template.Spec
	c := onlyContainer(t, "peer", pod)
	if len(c.Args) < 2 || c.Args[0] != "peer" {
		t.Fatalf("peer container args %q: want `peer DIR ...`", c.Args)
	}
	checkFlags(t, "peer", c, commandFlags(t, "peer"))

	// The data directory is the volume claimed per pod.
	if len(sts.Spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("StatefulSet has %d volumeClaimTemplates, want 1", len(sts.Spec.VolumeClaimTemplates))
	}
	pvc := sts.Spec.VolumeClaimTemplates[0]
	if q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; q.Sign() <= 0 {
		t.Errorf("volume claim %s requests no storage", pvc.Name)
	}
	if mountOf(c, pvc.Name) != c.Args[1] {
		t.Errorf("peer DIR %s is not where volume claim %s is mounted (%q)", c.Args[1], pvc.Name, mountOf(c, pvc.Name))
	}

	shard := listenPort(t, "peer --address", c.Args, "address")
	gossip := listenPort(t, "peer --bind", c.Args, "bind")
	checkContainerPort(t, "peer", c, "shard", shard, corev1.ProtocolTCP)
	checkContainerPort(t, "peer", c, "gossip", gossip, corev1.ProtocolTCP)
	checkContainerPort(t, "peer", c, "gossip-udp", gossip, corev1.ProtocolUDP)
	wantAdv := fmt.Sprintf("$(POD_NAME).%s.$(POD_NAMESPACE).svc.%s:%d", svc.Name, w.domain, shard)
	if adv, _ := arg(c.Args, "advertise-address"); adv != wantAdv {
		t.Errorf("peer --advertise-address %q, want its stable name %q", adv, wantAdv)
	}
	checkJoin(t, "peer", c, svc, w.domain, gossip)
	checkProbes(t, "peer", c)
	checkPodSecurity(t, "peer", pod, c)
	checkResources(t, "peer", c)
	checkEnvSecrets(t, "peer", c, w.secret, []string{"TESSERA_CLUSTER_SECRET"})
	for _, k := range []string{"TESSERA_ACCESS_KEY", "TESSERA_SECRET_KEY"} {
		if envVar(c, k) != nil {
			t.Errorf("peer gets %s: a peer has no S3 keys and should not hold them", k)
		}
	}
	if c.Image != w.image {
		t.Errorf("peer image %q, want %q", c.Image, w.image)
	}
}

func checkGateways(t *testing.T, dep *appsv1.Deployment, svc, peerSvc *corev1.Service, w want) {
	t.Helper()
	pod := dep.Spec.Template.Spec
	c := onlyContainer(t, "gateway", pod)
	if len(c.Args) < 1 || c.Args[0] != "gateway" {
		t.Fatalf("gateway container args %q: want `gateway ...`", c.Args)
	}
	checkFlags(t, "gateway", c, commandFlags(t, "gateway"))
	s3 := listenPort(t, "gateway --address", c.Args, "address")
	web := listenPort(t, "gateway --web-address", c.Args, "web-address")
	gossip := listenPort(t, "gateway --bind", c.Args, "bind")
	checkContainerPort(t, "gateway", c, "s3", s3, corev1.ProtocolTCP)
	checkContainerPort(t, "gateway", c, "web", web, corev1.ProtocolTCP)
	checkContainerPort(t, "gateway", c, "gossip", gossip, corev1.ProtocolTCP)
	checkContainerPort(t, "gateway", c, "gossip-udp", gossip, corev1.ProtocolUDP)
	peerGossip := servicePort(t, peerSvc, "gossip").Port
	checkJoin(t, "gateway", c, peerSvc, w.domain, peerGossip)
	if code, _ := arg(c.Args, "ec"); code != w.code {
		t.Errorf("gateway --ec %q, want %q", code, w.code)
	}
	if k, m, ok := parseCode(w.code); !ok || int32(k+m) > w.peers {
		t.Errorf("code %s is wider than the %d peers", w.code, w.peers)
	}
	checkProbes(t, "gateway", c)
	checkPodSecurity(t, "gateway", pod, c)
	checkResources(t, "gateway", c)
	checkEnvSecrets(t, "gateway", c, w.secret, []string{"TESSERA_ACCESS_KEY", "TESSERA_SECRET_KEY", "TESSERA_CLUSTER_SECRET"})
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		t.Errorf("gateway Service %s is headless; S3 clients need one address", svc.Name)
	}
	for name, port := range map[string]int32{"s3": 9000, "web": 9001} {
		if p := servicePort(t, svc, name); p.Port != port {
			t.Errorf("gateway Service port %s is %d, want %d", name, p.Port, port)
		}
	}
	if c.Image != w.image {
		t.Errorf("gateway image %q, want %q", c.Image, w.image)
	}
}

// checkFlags: every flag is one `tessera ROLE` accepts, and every $(VAR)
// in an argument is a variable of the container (the kubelet leaves an
// undefined one in the argument as it is).
func checkFlags(t *testing.T, role string, c corev1.Container, flags map[string]bool) {
	t.Helper()
	for _, a := range c.Args[1:] {
		if n := flagName(a); n != "" && !flags[n] {
			t.Errorf("%s argument %q: tessera %s has no flag --%s", role, a, role, n)
		}
		for _, m := range regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).FindAllStringSubmatch(a, -1) {
			if envVar(c, m[1]) == nil {
				t.Errorf("%s argument %q uses $(%s), which the container does not define", role, a, m[1])
			}
		}
	}
	for _, name := range []string{"POD_NAME", "POD_NAMESPACE"} {
		if e := envVar(c, name); e != nil {
			want := map[string]string{"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace"}[name]
			if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != want {
				t.Errorf("%s env %s is not the downward API's %s", role, name, want)
			}
		}
	}
}

func checkJoin(t *testing.T, role string, c corev1.Container, peerSvc *corev1.Service, domain string, gossip int32) {
	t.Helper()
	want := fmt.Sprintf("%s.$(POD_NAMESPACE).svc.%s:%d", peerSvc.Name, domain, gossip)
	if got, _ := arg(c.Args, "join"); got != want {
		t.Errorf("%s --join %q, want the peers' headless Service %q", role, got, want)
	}
}

// checkProbes: liveness and startup on /health/live, readiness on
// /health/ready, all on the port --web-address serves.
func checkProbes(t *testing.T, role string, c corev1.Container) {
	t.Helper()
	web := listenPort(t, role+" --web-address", c.Args, "web-address")
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/health/live"}, {"startup", c.StartupProbe, "/health/live"},
		{"readiness", c.ReadinessProbe, "/health/ready"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s has no HTTP %s probe", role, p.name)
			continue
		}
		if p.probe.HTTPGet.Path != p.path {
			t.Errorf("%s %s probe on %s, want %s", role, p.name, p.probe.HTTPGet.Path, p.path)
		}
		if port := resolvePort(c, p.probe.HTTPGet.Port); port != web {
			t.Errorf("%s %s probe on port %d, but --web-address serves %d", role, p.name, port, web)
		}
	}
}

func checkPodSecurity(t *testing.T, role string, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	ps, cs := pod.SecurityContext, c.SecurityContext
	if ps == nil || cs == nil {
		t.Fatalf("%s: pod or container securityContext missing", role)
	}
	if ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser == 0 {
		t.Errorf("%s pod: runAsNonRoot %v runAsUser %v; want a non-root user", role, ps.RunAsNonRoot, ps.RunAsUser)
	}
	if ps.FSGroup == nil || ps.RunAsGroup == nil || *ps.FSGroup != *ps.RunAsGroup {
		t.Errorf("%s pod: fsGroup %v, runAsGroup %v; the volume must be writable by the process's group", role, ps.FSGroup, ps.RunAsGroup)
	}
	if ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s pod: seccompProfile %v, want RuntimeDefault", role, ps.SeccompProfile)
	}
	if cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation {
		t.Errorf("%s container allows privilege escalation", role)
	}
	if cs.Capabilities == nil || !slices.Contains(cs.Capabilities.Drop, "ALL") || len(cs.Capabilities.Add) > 0 {
		t.Errorf("%s container capabilities %v, want all dropped and none added", role, cs.Capabilities)
	}
	if cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem {
		t.Errorf("%s container root filesystem is writable", role)
	}
	if mountOf(c, "tmp") != "/tmp" || volume(pod, "tmp") == nil || volume(pod, "tmp").EmptyDir == nil {
		t.Errorf("%s: a read-only root needs an emptyDir on /tmp", role)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("%s pod mounts a service account token it never uses", role)
	}
}

func checkResources(t *testing.T, role string, c corev1.Container) {
	t.Helper()
	r := c.Resources
	for _, q := range []struct {
		what string
		ok   bool
	}{{"cpu request", !r.Requests.Cpu().IsZero()}, {"memory request", !r.Requests.Memory().IsZero()},
		{"memory limit", !r.Limits.Memory().IsZero()}} {
		if !q.ok {
			t.Errorf("%s container has no %s", role, q.what)
		}
	}
	if r.Limits.Memory().Cmp(*r.Requests.Memory()) < 0 {
		t.Errorf("%s memory limit %s below its request %s", role, r.Limits.Memory(), r.Requests.Memory())
	}
}

func checkEnvSecrets(t *testing.T, role string, c corev1.Container, secret string, keys []string) {
	t.Helper()
	for _, k := range keys {
		e := envVar(c, k)
		if e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Errorf("%s env %s is not read from a Secret", role, k)
			continue
		}
		if ref := e.ValueFrom.SecretKeyRef; ref.Name != secret || ref.Key != k {
			t.Errorf("%s env %s reads %s/%s, want %s/%s", role, k, ref.Name, ref.Key, secret, k)
		}
	}
	for _, e := range c.Env {
		if strings.Contains(e.Name, "SECRET") || strings.Contains(e.Name, "KEY") {
			if e.Value != "" {
				t.Errorf("%s env %s carries its value in the manifest", role, e.Name)
			}
		}
	}
}

// checkSelections: every Service and PodDisruptionBudget selects the pods
// of exactly one workload, and every Service port targets a container port
// of those pods with the same protocol.
func checkSelections(t *testing.T, o *objects) {
	t.Helper()
	type workload struct {
		name   string
		labels map[string]string
		pod    corev1.PodSpec
	}
	var ws []workload
	for _, s := range o.statefulSets {
		ws = append(ws, workload{s.Name, s.Spec.Template.Labels, s.Spec.Template.Spec})
		checkSelectorMatches(t, "StatefulSet "+s.Name, s.Spec.Selector, s.Spec.Template.Labels)
	}
	for _, d := range o.deployments {
		ws = append(ws, workload{d.Name, d.Spec.Template.Labels, d.Spec.Template.Spec})
		checkSelectorMatches(t, "Deployment "+d.Name, d.Spec.Selector, d.Spec.Template.Labels)
	}
	selected := func(what string, sel map[string]string) *workload {
		var hits []*workload
		for i := range ws {
			if len(sel) > 0 && subset(sel, ws[i].labels) {
				hits = append(hits, &ws[i])
			}
		}
		if len(hits) != 1 {
			t.Errorf("%s selects %d workloads, want 1", what, len(hits))
			return nil
		}
		return hits[0]
	}
	for _, s := range o.services {
		w := selected("Service "+s.Name, s.Spec.Selector)
		if w == nil {
			continue
		}
		for _, p := range s.Spec.Ports {
			if p.TargetPort.Type != intstr.String {
				t.Errorf("Service %s port %s targets a number; name the container port", s.Name, p.Name)
				continue
			}
			cp, ok := containerPort(w.pod.Containers[0], p.TargetPort.StrVal)
			if !ok || cp.Protocol != p.Protocol {
				t.Errorf("Service %s port %s targets %s/%s, which %s does not serve", s.Name, p.Name, p.TargetPort.StrVal, p.Protocol, w.name)
			}
		}
	}
	for _, p := range o.pdbs {
		if p.Spec.Selector == nil {
			t.Errorf("PodDisruptionBudget %s has no selector", p.Name)
			continue
		}
		selected("PodDisruptionBudget "+p.Name, p.Spec.Selector.MatchLabels)
	}
}

func checkSelectorMatches(t *testing.T, what string, sel *metav1.LabelSelector, labels map[string]string) {
	t.Helper()
	if sel == nil || len(sel.MatchLabels) == 0 || !subset(sel.MatchLabels, labels) {
		t.Errorf("%s: selector %v does not match its pod template's labels %v", what, sel, labels)
	}
}

func checkSecret(t *testing.T, o *objects, w want) {
	t.Helper()
	if !w.secretCreated {
		if len(o.secrets) != 0 {
			t.Errorf("rendered %d Secrets, want none (the Secret %s is made outside the chart)", len(o.secrets), w.secret)
		}
		return
	}
	if len(o.secrets) != 1 || o.secrets[0].Name != w.secret {
		t.Fatalf("want the one Secret %s, got %d", w.secret, len(o.secrets))
	}
	for _, k := range []string{"TESSERA_ACCESS_KEY", "TESSERA_SECRET_KEY", "TESSERA_CLUSTER_SECRET"} {
		if o.secrets[0].StringData[k] == "" {
			t.Errorf("Secret %s has no %s", w.secret, k)
		}
	}
}

func checkMonitoring(t *testing.T, o *objects, w want) {
	t.Helper()
	if got := len(o.serviceMonitors); got != map[bool]int{true: 1}[w.serviceMonitor] {
		t.Fatalf("rendered %d ServiceMonitors, want serviceMonitor=%v", got, w.serviceMonitor)
	}
	if got := len(o.rules); got != map[bool]int{true: 1}[w.prometheusRule] {
		t.Fatalf("rendered %d PrometheusRules, want prometheusRule=%v", got, w.prometheusRule)
	}
	for _, sm := range o.serviceMonitors {
		if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Path != "/metrics" {
			t.Fatalf("ServiceMonitor %s endpoints %+v, want one on /metrics", sm.Name, sm.Spec.Endpoints)
		}
		port := sm.Spec.Endpoints[0].Port
		n := 0
		for _, s := range o.services {
			if !subset(sm.Spec.Selector.MatchLabels, s.Labels) {
				continue
			}
			n++
			servicePort(t, s, port)
		}
		if n != 2 {
			t.Errorf("ServiceMonitor %s selects %d Services, want the gateways' and the peers'", sm.Name, n)
		}
	}
	for _, r := range o.rules {
		if len(r.Spec.Groups) == 0 {
			t.Errorf("PrometheusRule %s has no groups", r.Name)
		}
		for _, g := range r.Spec.Groups {
			for _, rule := range g.Rules {
				if rule.Alert == "" || rule.Expr.String() == "" {
					t.Errorf("PrometheusRule %s group %s: a rule without alert name or expression", r.Name, g.Name)
				}
			}
		}
	}
}

func service(t *testing.T, o *objects, name string) *corev1.Service {
	t.Helper()
	for _, s := range o.services {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no Service %s", name)
	return nil
}

func servicePort(t *testing.T, s *corev1.Service, name string) corev1.ServicePort {
	t.Helper()
	for _, p := range s.Spec.Ports {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("Service %s has no port %q", s.Name, name)
	return corev1.ServicePort{}
}

func onlyContainer(t *testing.T, role string, pod corev1.PodSpec) corev1.Container {
	t.Helper()
	if len(pod.Containers) != 1 || len(pod.InitContainers) != 0 {
		t.Fatalf("%s pod has %d containers and %d init containers, want one container", role, len(pod.Containers), len(pod.InitContainers))
	}
	return pod.Containers[0]
}

func containerPort(c corev1.Container, name string) (corev1.ContainerPort, bool) {
	for _, p := range c.Ports {
		if p.Name == name {
			if p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
			return p, true
		}
	}
	return corev1.ContainerPort{}, false
}

func checkContainerPort(t *testing.T, role string, c corev1.Container, name string, port int32, proto corev1.Protocol) {
	t.Helper()
	p, ok := containerPort(c, name)
	if !ok || p.ContainerPort != port || p.Protocol != proto {
		t.Errorf("%s container port %s is %d/%s, want %d/%s (what its flags listen on)", role, name, p.ContainerPort, p.Protocol, port, proto)
	}
}

func resolvePort(c corev1.Container, p intstr.IntOrString) int32 {
	if p.Type == intstr.Int {
		return p.IntVal
	}
	cp, _ := containerPort(c, p.StrVal)
	return cp.ContainerPort
}

func mountOf(c corev1.Container, volume string) string {
	for _, m := range c.VolumeMounts {
		if m.Name == volume {
			return m.MountPath
		}
	}
	return ""
}

func volume(pod corev1.PodSpec, name string) *corev1.Volume {
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == name {
			return &pod.Volumes[i]
		}
	}
	return nil
}

func envVar(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// arg returns the value of --name=value or --name value.
func arg(args []string, name string) (string, bool) {
	for i, a := range args {
		if flagName(a) != name {
			continue
		}
		if _, v, ok := strings.Cut(a, "="); ok {
			return v, true
		}
		if i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// listenPort is the port of a host:port flag.
func listenPort(t *testing.T, what string, args []string, name string) int32 {
	t.Helper()
	v, ok := arg(args, name)
	if !ok {
		t.Fatalf("%s: flag not given", what)
	}
	_, ps, err := net.SplitHostPort(v)
	n, err2 := strconv.ParseInt(ps, 10, 32)
	if err != nil || err2 != nil || n <= 0 {
		t.Fatalf("%s %q: want host:port with a fixed port", what, v)
	}
	return int32(n)
}

func parseCode(code string) (k, m int, ok bool) {
	ks, ms, found := strings.Cut(code, "+")
	k, err1 := strconv.Atoi(ks)
	m, err2 := strconv.Atoi(ms)
	return k, m, found && err1 == nil && err2 == nil && k > 0 && m >= 0
}

func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestDecodeObjectsStrict shows the decoder refuses what the API server
// would: a misspelt field, a value of the wrong type, an unknown kind.
func TestDecodeObjectsStrict(t *testing.T) {
	base := "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n    - port: 9000\n"
	if _, err := decodeObjects([]byte(base)); err != nil {
		t.Fatalf("a valid Service: %v", err)
	}
	for name, doc := range map[string]string{
		"unknown field": strings.Replace(base, "ports:", "portz:", 1),
		"wrong type":    strings.Replace(base, "port: 9000", "port: [9000]", 1),
		"duplicate key": base + "  ports: []\n",
		"unknown kind":  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n",
		"probe typo":    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n        - name: c\n          livenesProbe: {}\n",
	} {
		if _, err := decodeObjects([]byte(doc)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
	if o, err := decodeObjects([]byte("# only a comment\n---\n" + base + "---\n")); err != nil || len(o.services) != 1 {
		t.Errorf("comment-only and empty documents: %v, %+v", err, o)
	}
}

// defaultWant is what the chart's defaults, released as "tessera", make.
func defaultWant(t *testing.T) want {
	return want{fullname: "tessera", secret: "tessera-auth", peers: 6, code: "4+2", domain: "cluster.local",
		image: "tessera:" + version(t)}
}

// TestManifests checks the committed plain manifests; it needs no tool.
func TestManifests(t *testing.T) {
	b := readFile(t, "kubernetes/tessera.yaml")
	if !bytes.HasPrefix(b, []byte(manifestHeader)) {
		t.Errorf("kubernetes/tessera.yaml does not start with its header")
	}
	o, err := decodeObjects(b)
	if err != nil {
		t.Fatal(err)
	}
	checkCluster(t, o, defaultWant(t))
	if len(o.pdbs) != 2 {
		t.Errorf("%d PodDisruptionBudgets, want one for the peers and one for the gateways", len(o.pdbs))
	}
}
