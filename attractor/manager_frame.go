package attractor

import (
	"strconv"
	"strings"
)

// A managerFrame is one house node running its child. Resume inside the
// child works through the context, which every checkpoint journals: before
// a child node's checkpoint the frame notes the child node to continue at
// (internal.manager.<house>.next) and the steps taken
// (internal.manager.<house>.cycles), and the checkpoint's NextNode names
// the node of the run's own pipeline the house runs in (the house, or
// the parallel node around it). A resumed run executes that node again;
// the house finds its note and continues its child there. A nested
// house notes its own position, and its parent notes the nested house.
// The notes are removed when the house ends. A third note keeps the
// context as the child started, for a failed child to roll back to.
type managerFrame struct {
	house  *Node
	parent *managerFrame // the frame whose child holds house; nil at depth 1
	// resume is, at depth 1, the NextNode the run's state had when the
	// house started: where a resumed run starts again.
	resume string
	rc     *Context // the house's lane context, shared with its child
}

func (f *managerFrame) nextKey() string   { return "internal.manager." + f.house.ID + ".next" }
func (f *managerFrame) cyclesKey() string { return "internal.manager." + f.house.ID + ".cycles" }
func (f *managerFrame) baseKey() string   { return "internal.manager." + f.house.ID + ".base" }

// managerKeyPrefix starts the keys of every frame's notes.
const managerKeyPrefix = "internal.manager."

// keepBase notes the context as the child starts, which a failed child
// rolls back to (rollback). It is journaled like the other notes, so a
// resumed house can still roll back.
func (f *managerFrame) keepBase() {
	base := map[string]any{}
	for _, k := range f.rc.Keys() {
		if !strings.HasPrefix(k, managerKeyPrefix) {
			base[k], _ = f.rc.Get(k)
		}
	}
	f.rc.Set(f.baseKey(), base)
}

// rollback undoes what a failed child wrote to the context: a failed
// child's context never reaches the parent, where a condition on it could
// route the failure as if the child had done its work. Frames' notes are
// left alone.
func (f *managerFrame) rollback() {
	v, ok := f.rc.Get(f.baseKey())
	base, _ := v.(map[string]any)
	if !ok || base == nil {
		return
	}
	for _, k := range f.rc.Keys() {
		if _, kept := base[k]; !kept && !strings.HasPrefix(k, managerKeyPrefix) {
			f.rc.delete(k)
		}
	}
	for k, was := range base {
		if cur, ok := f.rc.Get(k); !ok || !sameValue(cur, was) {
			f.rc.Set(k, was)
		}
	}
}

// pin notes that the child continues at next and returns the node of the
// run's own pipeline a resume starts at.
func (f *managerFrame) pin(next string) string {
	f.rc.Set(f.nextKey(), next)
	if f.parent != nil {
		return f.parent.pin(f.house.ID)
	}
	return f.resume
}

// pinState makes st's NextNode the resume node for a checkpoint of a
// child node; the returned function restores it.
func (f *managerFrame) pinState(st *State) (restore func()) {
	next := st.NextNode
	st.NextNode = f.pin(next)
	return func() { st.NextNode = next }
}

// resumePoint returns the child node a resumed house continues at and
// the steps its child had taken, from the notes; ok is false for a house
// that starts its child afresh.
func (f *managerFrame) resumePoint() (next string, cycles int, ok bool) {
	next, ok = f.rc.String(f.nextKey())
	if !ok || next == "" {
		return "", 0, false
	}
	c, _ := f.rc.String(f.cyclesKey())
	cycles, _ = strconv.Atoi(c)
	return next, cycles, true
}

// clear removes the frame's notes from the context.
func (f *managerFrame) clear() {
	for _, k := range []string{f.nextKey(), f.cyclesKey(), f.baseKey()} {
		if _, ok := f.rc.Get(k); ok {
			f.rc.delete(k)
		}
	}
}

// forgetChild resets what the state keeps of an earlier run of the
// child under prefix: its visit and retry counts (a new run of the child
// starts them afresh) and its goal gates (checked at the child's exit,
// never at the parent's).
func (s *State) forgetChild(prefix string) {
	for id, v := range s.Visits {
		if v != 0 && strings.HasPrefix(id, prefix) {
			s.setVisits(id, 0)
		}
	}
	for id, v := range s.Retries {
		if v != 0 && strings.HasPrefix(id, prefix) {
			s.setRetries(id, 0)
		}
	}
	s.dropGoalGates(prefix)
}

// dropGoalGates removes the goal gates of nodes under prefix.
func (s *State) dropGoalGates(prefix string) {
	keep := func(g GoalGateResult) bool { return !strings.HasPrefix(g.Node, prefix) }
	n := 0
	for _, g := range s.GoalGates {
		if keep(g) {
			n++
		}
	}
	if n == len(s.GoalGates) {
		return
	}
	s.noteGoalGates()
	out := make([]GoalGateResult, 0, n)
	for _, g := range s.GoalGates {
		if keep(g) {
			out = append(out, g)
		}
	}
	s.GoalGates = out
}

// childGate returns the first goal gate under prefix, in completion order,
// whose latest outcome is not a success.
func (s *State) childGate(prefix string) (GoalGateResult, bool) {
	for _, g := range s.GoalGates {
		if strings.HasPrefix(g.Node, prefix) && !g.Status.Succeeded() {
			return g, true
		}
	}
	return GoalGateResult{}, false
}
