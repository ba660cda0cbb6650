package checks

// Resumable reports whether a run can be re-run from its failure: it
// failed at a node, and another node made a checkpoint to resume from.
func Resumable(v *RunView) bool {
	if v.Status != RunFailed || v.FailedNode == "" {
		return false
	}
	for _, n := range v.Nodes {
		if n.ID != v.FailedNode && n.CheckpointSHA != "" {
			return true
		}
	}
	return false
}
