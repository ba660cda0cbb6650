package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLatestFailed: only a pipeline whose newest summary check failed is
// resumable, from the run that check names; verify checks, other apps'
// names, older failures and unfinished checks do not count.
func TestLatestFailed(t *testing.T) {
	runs := []CheckRunState{ // newest first, as GitHub lists them
		{Name: "kilroy/ci", ExternalID: "R3", Status: "completed", Conclusion: "failure"},
		{Name: "kilroy/ci/vet", ExternalID: "R3/vet", Status: "completed", Conclusion: "failure"},
		{Name: "kilroy/lint", ExternalID: "L2", Status: "completed", Conclusion: "success"},
		{Name: "kilroy/lint", ExternalID: "L1", Status: "completed", Conclusion: "failure"},
		{Name: "kilroy/docs", ExternalID: "D1", Status: "in_progress"},
		{Name: "kilroy/config", ExternalID: "config-x", Status: "completed", Conclusion: "failure"},
		{Name: "other/ci", ExternalID: "O1", Status: "completed", Conclusion: "failure"},
		{Name: "kilroy/ci", ExternalID: "R1", Status: "completed", Conclusion: "failure"},
	}
	if diff := cmp.Diff(latestFailed(runs), map[string]string{"ci": "R3"}); diff != "" {
		t.Errorf("latestFailed (-got +want):\n%s", diff)
	}
}
