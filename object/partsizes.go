package object

import "tessera/meta"

// partSizes lists the sizes of an object's parts in order, so a client can
// fetch one part of a multipart object (GET ?partNumber=N).
func partSizes(o *meta.Object) []int64 {
	parts := partsOf(o)
	out := make([]int64, len(parts))
	for i, p := range parts {
		out[i] = p.Size
	}
	return out
}
