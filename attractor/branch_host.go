package attractor

import (
	"context"
	"fmt"
	"strings"
)

// BranchHost is an optional Host capability: workspaces of their own for
// parallel branches. With it a parallel node runs its branches at once
// (at most max_parallel), each in a workspace forked from the run's
// current checkpoint, and the fan-in merges the successful branches back.
// Without it branches run one after another in the run's workspace.
//
// Fork, Release and Join are called from the goroutine that owns the run;
// a Branch's Host is called from that branch's goroutine only.
type BranchHost interface {
	// Fork makes a workspace for one branch, starting at the run's last
	// checkpoint.
	Fork(ctx context.Context, req ForkRequest) (Branch, error)
	// Release discards a finished branch's workspace; its checkpoints stay
	// reachable through Branch.Ref for Join.
	Release(ctx context.Context, b Branch) error
	// Join merges the refs into the run's workspace in the order given and
	// returns the new head. A conflict is a *MergeConflictError, after the
	// workspace was put back as it was.
	Join(ctx context.Context, req JoinRequest) (string, error)
}

// ForkRequest asks for one branch's workspace.
type ForkRequest struct {
	RunID    string
	Parallel *Node // the fan-out node
	Index    int   // the branch's position among Parallel's outgoing edges
	Head     string
}

// Branch is a forked workspace.
type Branch struct {
	// Host runs the branch's processes in Workspace and checkpoints it. Its
	// checkpoints do not move the run's resume point: a resumed run starts
	// the parallel node again.
	Host      Host
	Workspace string
	Ref       string // what Join merges, e.g. a git branch
}

// JoinRequest asks to merge branches into the run's workspace.
type JoinRequest struct {
	RunID     string
	FanIn     *Node
	Workspace string
	Refs      []string // in the fan-out's edge order
}

// MergeConflictError is the error Join returns when merging Ref conflicts
// with what was merged before it. Paths are sorted.
type MergeConflictError struct {
	Ref   string
	Paths []string
}

func (e *MergeConflictError) Error() string {
	return fmt.Sprintf("merging %s conflicts on %s", e.Ref, strings.Join(e.Paths, ", "))
}
