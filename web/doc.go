// Package web serves the operator's view of a node: liveness and readiness
// probes for load balancers and orchestrators, and the JSON status of the
// cluster as this node sees it. It reads the rest of the system only
// through the small Source interface, so it never blocks the data path.
package web
