package meta

import "context"

type priorityKey struct{}

// WithReadPriority returns ctx carrying a shard read's send priority for
// the peer: the size in bytes of the read it serves, smaller first (see
// sched.Action.Priority). Values <= 0 leave ctx as it is.
func WithReadPriority(ctx context.Context, prio int64) context.Context {
	if prio <= 0 {
		return ctx
	}
	return context.WithValue(ctx, priorityKey{}, prio)
}

// ReadPriority returns the priority WithReadPriority put in ctx, or 0.
func ReadPriority(ctx context.Context) int64 {
	p, _ := ctx.Value(priorityKey{}).(int64)
	return p
}
