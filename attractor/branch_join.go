package attractor

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// joinBranches merges the workspaces of the successful branches into the
// run's workspace, in the fan-out's edge order so the result does not
// depend on which branch finished first. Branches that ran in the run's
// own workspace have no ref and need no merge. It returns a success whose
// notes say what was merged, or the fan-in's failure.
func joinBranches(ctx context.Context, s *Stage, results []BranchResult) Outcome {
	var refs []string
	for _, br := range results {
		if isSuccess(br.Status) && br.Ref != "" {
			refs = append(refs, br.Ref)
		}
	}
	if len(refs) == 0 {
		return Outcome{Status: StatusSuccess}
	}
	bh, ok := s.Host.(BranchHost)
	if !ok {
		return failOutcome(ClassStructural, fmt.Sprintf(
			"fan-in %s: the branches ran in workspaces of their own (%s), and this host cannot merge them", s.Node.ID, strings.Join(refs, ", ")))
	}
	sha, err := bh.Join(ctx, JoinRequest{RunID: s.RunID, FanIn: s.Node, Workspace: s.Workspace, Refs: refs})
	if err != nil {
		return joinFailure(s.Node, results, err)
	}
	return Outcome{Status: StatusSuccess, Notes: fmt.Sprintf("merged %d branch(es) at %s", len(refs), sha)}
}

// joinFailure turns a failed Join into the fan-in's outcome. A conflict is
// deterministic (the same branches conflict again) and names the paths;
// anything else is infrastructure and may be retried.
func joinFailure(fanIn *Node, results []BranchResult, err error) Outcome {
	var mc *MergeConflictError
	if !errors.As(err, &mc) {
		return failOutcome(ClassTransientInfra, fmt.Sprintf("fan-in %s: merging the branches failed: %v", fanIn.ID, err))
	}
	head := mc.Ref
	for _, br := range results {
		if br.Ref == mc.Ref {
			head = br.Branch
		}
	}
	paths := strings.Join(mc.Paths, ", ")
	o := failOutcome(ClassDeterministic, fmt.Sprintf(
		"fan-in %s: merge conflict: branch %s (%s) conflicts with the branches merged before it in %s; "+
			"the run's workspace is unchanged. Make parallel branches change different files, or run them in sequence",
		fanIn.ID, head, mc.Ref, paths))
	o.FailureSignature = "merge_conflict: " + head + ": " + paths
	o.Details = map[string]any{"conflict_branch": head, "conflict_ref": mc.Ref, "conflict_paths": mc.Paths}
	return o
}
