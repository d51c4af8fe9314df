// Package deploy holds no code: its tests check the deployment files
// beside it against the tessera binary built from the parent directory.
//
//   - helm/tessera, the chart, renders (helm template, helm lint) and every
//     object decodes strictly into its Kubernetes type; the workloads' probes,
//     ports, volumes, security contexts and secret references are checked,
//     and every flag they pass is one the binary accepts.
//     kubernetes/tessera.yaml is the chart rendered with its defaults and
//     must stay so (-rewrite renders it again).
//   - systemd/ units pass systemd-analyze verify and stay in the "OK"
//     band of systemd-analyze security; they run the role they name with
//     its real flags, sandboxed, writing only their data directory.
//   - prometheus/ rules pass promtool check rules and their unit tests, and
//     every series the rules and grafana/tessera.json name is one a running
//     gateway or peer exports on /metrics.
//   - scripts/release.sh builds static binaries for linux/amd64 and
//     linux/arm64 whose sums verify and which carry their version.
//
// It is a module of its own so that the Prometheus and Kubernetes modules
// its tests parse with stay out of tessera's go.mod. Tools a test needs are
// found on PATH; without one a test skips saying so, except under CI=true,
// where it fails.
package deploy
