package attractor

import (
	"reflect"
	"unsafe"
)

// Equality for deltas (DiffState, State.delta). A value compared with
// what it was at the last checkpoint is most often the very same value
// (a node writes outcome=success again, a clone shares every entry it
// did not change): these say so at once (the same scalars, the same maps
// and slices) and leave the rest to reflect.DeepEqual, whose answer they
// never change.

func sameInt(a, b int) bool { return a == b }

// sameOutcome is reflect.DeepEqual(a, b), quick when every field holds
// the same value or the same map or slice.
func sameOutcome(a, b Outcome) bool {
	if a.Status == b.Status && a.PreferredLabel == b.PreferredLabel && a.Notes == b.Notes &&
		a.FailureReason == b.FailureReason && a.FailureClass == b.FailureClass &&
		a.FailureSignature == b.FailureSignature && a.Response == b.Response &&
		sameSlice(a.SuggestedNextIDs, b.SuggestedNextIDs) && sameSlice(a.Findings, b.Findings) &&
		sameMap(a.ContextUpdates, b.ContextUpdates) && sameMap(a.Meta, b.Meta) && sameMap(a.Details, b.Details) &&
		sameUsage(a.Usage, b.Usage) {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// sameUsage reports whether a and b are both nil or hold the same usage.
func sameUsage(a, b *Usage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// sameValue is reflect.DeepEqual(a, b), quick for the scalars a run
// context mostly holds.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int:
		y, ok := b.(int)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

// sameMap reports whether a and b are both nil or the same map; false
// means "look closer", not "different".
func sameMap[M ~map[K]V, K comparable, V any](a, b M) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// sameSlice reports whether a and b are both nil or the same slice;
// false means "look closer", not "different".
func sameSlice[S ~[]E, E any](a, b S) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}
